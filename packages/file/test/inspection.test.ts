import { existsSync, mkdirSync, readdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyDirName } from '../src/index.js';
import { nextWait, providerFactory, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('inspection');
const provider = providerFactory(directory);
const keyDir = (kind: 'mutex' | 'write' | 'semaphore', name: string): string =>
  join(directory, keyDirName('', kind, name));
const records = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('h.'));
/** Puts `path`'s mtime a lease and a second in the past (its holder looks dead). */
const ageOut = (path: string): void => {
  const old = (Date.now() - TEST_LEASE_MS - 1000) / 1000;
  utimesSync(path, old, old);
};

describe('inspection on disk', () => {
  it('each grant writes one hold record next to its marker; release removes it', async () => {
    const lock = provider().createSemaphore('records', 3);
    const handles = [await lock.acquire(), await lock.acquire({ permits: 2 })];
    const dir = keyDir('semaphore', 'records');
    const markers = readdirSync(dir).filter((n) => /^p\d*\./.test(n));
    expect(records(dir).sort()).toEqual(markers.map((n) => `h.${n}`).sort());
    const state = await lock.inspect();
    expect(state.holders.map((h) => h.permits).sort()).toEqual([1, 2]);
    expect(state.permitsFree).toBe(0);
    for (const handle of handles) expect(await handle.release()).toBe(true);
    expect(records(dir)).toEqual([]);
  });

  it('a hold without a record (an older client) is reported with owner, since and token unknown', async () => {
    const rw = provider().createReadWriteLock('old-client');
    const reader = await rw.acquireRead();
    const dir = keyDir('write', 'old-client');
    const [record] = records(dir);
    renameSync(join(dir, record!), join(directory, 'set-aside'));
    const state = await rw.inspect();
    expect(state.holders).toEqual([
      expect.objectContaining({
        kind: 'read',
        fencingToken: undefined,
        owner: undefined,
        since: undefined,
      }),
    ]);
    expect(state.holders[0]!.validUntil).toBeGreaterThan(Date.now());
    expect(await reader.release()).toBe(true);
  });

  it('a stale holder is not a holder; the contender that takes it over removes its record', async () => {
    const lock = provider().createLock('stale');
    const dir = keyDir('mutex', 'stale');
    const first = await lock.acquire();
    expect(await first.release()).toBe(true);
    // A dead holder: its lock directory with a marker and a record, heartbeat a lease ago.
    mkdirSync(join(dir, 'lock', '1.dead.holder.2'), { recursive: true });
    const record = {
      owner: 'dead',
      since: Date.now() - 5000,
      token: String(first.fencingToken + 1n),
    };
    writeFileSync(join(dir, 'h.1.dead.holder.2'), JSON.stringify(record));
    ageOut(join(dir, 'lock'));
    expect((await lock.inspect()).holders).toEqual([]);
    const handle = await lock.acquire({ timeout: 1000 });
    expect(existsSync(join(dir, 'h.1.dead.holder.2'))).toBe(false);
    const state = await lock.inspect();
    expect(state.holders.map((h) => h.fencingToken)).toEqual([handle.fencingToken]);
    expect(await handle.release()).toBe(true);
  });

  it('a writer keeping the gate while a reader drains waits: it is counted, not a holder', async () => {
    const rw = provider().createReadWriteLock('draining');
    const reader = await rw.acquireRead();
    const queued = nextWait();
    const writer = provider().createReadWriteLock('draining').acquireWrite({ timeout: 5000 });
    await queued;
    const state = await rw.inspect();
    expect(state.holders.map((h) => h.kind)).toEqual(['read']);
    expect(state.waiting).toBe(1);
    // A break ends the reader's hold only; the writer gets the lock.
    expect(await rw.forceRelease()).toBe(1);
    const written = await writer;
    expect(written.fencingToken).toBeGreaterThan(reader.fencingToken);
    expect((await rw.inspect()).holders.map((h) => h.kind)).toEqual(['write']);
    expect(await reader.release()).toBe(false);
    expect(await written.release()).toBe(true);
  });

  it('forceRelease removes records left by holders that are gone', async () => {
    const lock = provider().createLock('orphans');
    const handle = await lock.acquire();
    const dir = keyDir('mutex', 'orphans');
    const [record] = records(dir);
    // A crashed holder's record, whose marker was claimed by a takeover that did not tidy it.
    renameSync(join(dir, record!), join(dir, 'h.1.gone.holder.1'));
    expect(await lock.forceRelease()).toBe(1);
    expect(records(dir)).toEqual([]);
    expect(await handle.release()).toBe(false);
  });
});
