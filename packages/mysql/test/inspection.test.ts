import { LockLostError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { mutexKey } from '../src/index.js';
import { abortedWithin, adminQuery, eventually, ms, provider, uniqueName } from './support.js';

describe('inspect() and forceRelease() on MySQL', () => {
  it("the README's prune deletes the rows of names nobody holds and keeps those of live holds", async () => {
    const locks = provider({ owner: 'pruned' });
    const [held, done] = [uniqueName('prune-held'), uniqueName('prune-done')];
    const handle = await locks.createLock(held).acquire();
    await (await locks.createLock(done).acquire()).release();
    const rowsOf = (name: string) =>
      adminQuery<unknown[]>('SELECT k FROM lockkit_holds WHERE k = ?', [mutexKey('', name)]);
    expect(await rowsOf(done)).toHaveLength(1); // a release leaves its row
    await adminQuery('DELETE FROM lockkit_holds WHERE IS_USED_LOCK(k) IS NULL');
    expect(await rowsOf(done)).toHaveLength(0);
    expect((await locks.createLock(held).inspect()).holders).toEqual([
      expect.objectContaining({ owner: 'pruned', fencingToken: handle.fencingToken }),
    ]);
    expect(await handle.release()).toBe(true);
  });

  it('forceRelease breaks one lock of a shared session and leaves its other locks held', async () => {
    const holder = provider({ sharedConnections: 1, owner: 'holder' });
    const operator = provider();
    const [broken, other] = [uniqueName('break-me'), uniqueName('keep-me')];
    const target = await holder.createLock(broken).acquire();
    const kept = await holder.createLock(other).acquire();
    expect(holder.connectionIdOf(target)).toBe(holder.connectionIdOf(kept));
    expect(await operator.createLock(broken).forceRelease()).toBe(1);
    const bound = ms(holder.capabilities.lostDetectionMs + 500);
    expect(LockLostError.isInstance(await abortedWithin(target.signal, bound))).toBe(true);
    expect(kept.signal.aborted).toBe(false);
    expect((await operator.createLock(other).inspect()).holders).toHaveLength(1);
    expect(await target.release()).toBe(false);
    expect(await kept.release()).toBe(true);
  }, 60_000);

  it('reports holds without a row (recordHolds: false) and forceRelease kills their session after the grace', async () => {
    const holder = provider({ recordHolds: false });
    const operator = provider();
    const name = uniqueName('no-row');
    const handles = [
      await holder.createSemaphore(name, 3).acquire(),
      await holder.createSemaphore(name, 3).acquire(),
    ];
    const state = await operator.createSemaphore(name, 3).inspect();
    expect(state.holders).toHaveLength(2);
    for (const hold of state.holders) {
      expect(hold).toMatchObject({ kind: 'semaphore', fencingToken: undefined, owner: undefined });
    }
    expect(state.permitsFree).toBe(1);
    const started = Date.now();
    expect(await operator.createSemaphore(name, 3).forceRelease()).toBe(2);
    // Nobody reads the mark: the holders' sessions are killed after lostDetectionMs + 1 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(operator.capabilities.lostDetectionMs);
    const bound = ms(holder.capabilities.lostDetectionMs + 500);
    for (const handle of handles) {
      expect(LockLostError.isInstance(await abortedWithin(handle.signal, bound))).toBe(true);
    }
    expect((await operator.createSemaphore(name, 3).inspect()).holders).toEqual([]);
  }, 60_000);

  it('counts a waiting writer and waiting readers from PROCESSLIST', async () => {
    const name = uniqueName('waiters');
    const writer = await provider().createReadWriteLock(name).acquireWrite();
    const waiters = [
      provider()
        .createReadWriteLock(name)
        .acquireWrite({ timeout: ms(20_000) }),
      provider()
        .createReadWriteLock(name)
        .acquireRead({ timeout: ms(20_000) }),
    ];
    const observer = provider().createReadWriteLock(name);
    await eventually(
      async () => (await observer.inspect()).waiting === 2,
      ms(5000),
      'inspect() to count both waiters',
    );
    const state = await observer.inspect();
    expect(state.waiting).toBe(2);
    expect(state.holders.map((hold) => hold.kind)).toEqual(['write']);
    await writer.release();
    // Either waiter may be granted first (the reader would block the writer's drain): release
    // each as soon as it is granted.
    await Promise.all(
      waiters.map(async (waiter) => expect(await (await waiter).release()).toBe(true)),
    );
  }, 60_000);
});
