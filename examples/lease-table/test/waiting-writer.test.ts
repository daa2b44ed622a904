import { waitFor } from '@lockkit/conformance';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLeaseTableLockProvider } from '../src/index.js';
import { testOptions } from './test-options.js';

const url = inject('lockkitServers').postgresUrl!;
const provider = createLeaseTableLockProvider({ connection: url, ...testOptions });
const other = createLeaseTableLockProvider({ connection: url, ...testOptions });
afterAll(() => Promise.all([provider.close(), other.close()]));

/** Whether a reader from another provider is refused right now (a reader that gets in leaves). */
async function readerRefused(name: string): Promise<boolean> {
  const reader = await other.createReadWriteLock(name).tryAcquireRead();
  await reader?.release();
  return reader === null;
}

// The state a waiting writer leaves behind once it gives up (docs/writing-a-backend.md,
// "When a waiting attempt ends"): its marker keeps readers out only while it waits.
describe('a waiting writer that gives up', () => {
  it('keeps new readers out while it waits', async () => {
    const rw = provider.createReadWriteLock('marker-while-waiting');
    const reader = await rw.acquireRead();
    const writer = rw.acquireWrite({ timeout: 5_000 });
    await waitFor(
      () => readerRefused('marker-while-waiting'),
      2_000,
      'the waiting writer to keep a new reader out',
    );
    await reader.release();
    await (await writer).release();
  });

  it('by timeout leaves no marker: a reader gets in right after', async () => {
    const rw = provider.createReadWriteLock('marker-after-timeout');
    const reader = await rw.acquireRead();
    expect(await rw.tryAcquireWrite({ timeout: 300 })).toBeNull();
    // The marker's removal starts when the wait ends and runs in the background (see
    // docs/writing-a-backend.md, "When a waiting attempt ends"), so it may lag the null.
    await waitFor(
      async () => !(await readerRefused('marker-after-timeout')),
      1_000,
      'a reader to get in after the writer timed out',
    );
    await reader.release();
  });

  it('by abort or close leaves no marker once its cleanup ran', async () => {
    for (const end of ['abort', 'close'] as const) {
      const name = `marker-after-${end}`;
      const own = createLeaseTableLockProvider({ connection: url, ...testOptions });
      const reader = await provider.createReadWriteLock(name).acquireRead();
      const controller = new AbortController();
      const writer = own.createReadWriteLock(name).acquireWrite({ signal: controller.signal });
      await waitFor(() => readerRefused(name), 2_000, 'the writer to wait');
      if (end === 'abort') controller.abort(new Error('caller gave up'));
      const closed = own.close(); // close() resolves only after the backend's cleanup
      await expect(writer).rejects.toThrow();
      await closed;
      expect(await readerRefused(name), end).toBe(false);
      await reader.release();
    }
  });
});
