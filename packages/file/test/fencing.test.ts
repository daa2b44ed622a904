import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FencingCounters } from '../src/fencing-counter.js';
import { type FileOps, syncFileOps } from '../src/file-system.js';
import { keyDirName } from '../src/index.js';
import {
  providerFactory,
  startChild,
  TEST_LEASE_MS,
  temporaryDirectory,
  waitUntil,
} from './support.js';

const directory = temporaryDirectory('fencing');
const provider = providerFactory(directory);
const env = { LOCKKIT_TEST_FILE_DIR: directory, LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS) };
const keyDir = (name: string): string => join(directory, keyDirName('', 'mutex', name));
const counterFiles = (name: string): string[] =>
  readdirSync(keyDir(name)).filter((entry) => entry.startsWith('fence'));

describe('fencing counter on disk', () => {
  it('is the name of one empty file, fence.<last token>', async () => {
    const lock = provider().createLock('format');
    for (let i = 0; i < 3; i++) await (await lock.acquire()).release();
    expect(counterFiles('format')).toEqual(['fence.3']);
    expect(readFileSync(join(keyDir('format'), 'fence.3'), 'latin1')).toBe('');
  });

  it('continues from the file: a new provider (a restart) never repeats a token', async () => {
    renameSync(join(keyDir('format'), 'fence.3'), join(keyDir('format'), 'fence.41'));
    const handle = await provider().createLock('format').acquire();
    expect(handle.fencingToken).toBe(42n);
    await handle.release();
  });

  it('a draw held up past other draws gets no stale token and never moves the counter back', async () => {
    // Process A learns the counter stands at 0, then stalls before it moves it (its rename
    // is held back); meanwhile B draws five tokens. When A goes on, the counter must not go
    // back to 1 (a counter kept as file content did: the held-up write landed late).
    const dir = keyDir('stall');
    let letGo: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let stalled: () => void = () => {};
    const stalling = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    let first = true;
    const stallingOps: FileOps = {
      ...syncFileOps,
      rename: async (from, to) => {
        if (first && to.endsWith('fence.1')) {
          first = false;
          stalled();
          await held;
        }
        return syncFileOps.rename(from, to);
      },
    };
    const a = new FencingCounters(stallingOps);
    const b = new FencingCounters(syncFileOps);
    const drawA = a.next(dir);
    await stalling;
    const drawn: bigint[] = [];
    for (let i = 0; i < 5; i++) drawn.push(await b.next(dir));
    expect(drawn).toEqual([1n, 2n, 3n, 4n, 5n]);
    letGo();
    expect(await drawA).toBe(6n); // its rename of fence.0 failed: it read the directory again
    expect(readdirSync(dir)).toEqual(['fence.6']);
    expect(await b.next(dir)).toBe(7n);
  });

  it('never decreases when holders are SIGKILLed at random moments, mid-hold or mid-update', async () => {
    const seen: bigint[] = [];
    for (let kill = 0; kill < 4; kill++) {
      const child = await startChild('contender', env);
      const tokens: bigint[] = [];
      child.send({ cmd: 'hammer', name: 'hammer' });
      const pump = (async () => {
        for (;;) tokens.push(BigInt(String((await child.next())['token'])));
      })().catch(() => undefined);
      await waitUntil(() => tokens.length >= 20 + kill * 7, 20_000, 'the child to take tokens');
      await child.kill();
      await pump;
      seen.push(...tokens);
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    expect(counterFiles('hammer')).toHaveLength(1);
    // The last child may have died holding the lock: we get it once its lease runs out.
    const handle = await provider()
      .createLock('hammer')
      .acquire({ timeout: TEST_LEASE_MS * 3 });
    expect(handle.fencingToken).toBeGreaterThan(seen.at(-1)!);
    await handle.release();
  }, 60_000);
});
