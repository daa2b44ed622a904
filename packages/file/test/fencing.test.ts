import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BackendUnavailableError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
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
const fenceFile = (name: string): string => join(directory, keyDirName('', 'mutex', name), 'fence');

describe('fencing counter on disk', () => {
  it('is one fixed-width record holding the last token', async () => {
    const lock = provider().createLock('format');
    for (let i = 0; i < 3; i++) await (await lock.acquire()).release();
    expect(readFileSync(fenceFile('format'), 'latin1')).toBe('00000000000000000003\n');
  });

  it('continues from the file: a new provider (a restart) never repeats a token', async () => {
    writeFileSync(fenceFile('format'), '00000000000000000041\n');
    const handle = await provider().createLock('format').acquire();
    expect(handle.fencingToken).toBe(42n);
    await handle.release();
  });

  it('a corrupt counter fails the acquire with BackendUnavailableError and frees the lock', async () => {
    const lock = provider().createLock('corrupt');
    await (await lock.acquire()).release();
    writeFileSync(fenceFile('corrupt'), 'garbage');
    const error = await lock.acquire().catch((e: unknown) => e);
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toContain('corrupt');
    writeFileSync(fenceFile('corrupt'), '00000000000000000007\n');
    const handle = await lock.tryAcquire();
    expect(handle?.fencingToken).toBe(8n);
    await handle?.release();
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
    expect(readFileSync(fenceFile('hammer'), 'latin1')).toMatch(/^\d{20}\n$/);
    // The last child may have died holding the lock: we get it once its lease runs out.
    const handle = await provider()
      .createLock('hammer')
      .acquire({ timeout: TEST_LEASE_MS * 3 });
    expect(handle.fencingToken).toBeGreaterThan(seen.at(-1)!);
    await handle.release();
  }, 60_000);
});
