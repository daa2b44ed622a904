import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keyDirName } from '../src/index.js';
import { GOLDEN_KEYS } from './golden-keys.js';
import { providerFactory, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('names');
const createProvider = providerFactory(directory);
const awkward = ['', '/', '..', '../../etc/passwd', '\0', 'a\\b', 'C:\\x', 'CON', 'Ab', 'aB', '🔒'];

describe('names → file names', () => {
  it('matches the pinned mapping (mutex family)', () => {
    for (const [name, key] of GOLDEN_KEYS) expect(keyDirName('', 'mutex', name)).toBe(key);
  });

  it('pins the other families and the namespace too', () => {
    expect(keyDirName('', 'read', 'orders')).toBe(keyDirName('', 'write', 'orders'));
    expect(keyDirName('', 'read', 'orders')).toBe('rw.orders.ypaygtwzci2xka2dnbjowcsno3');
    expect(keyDirName('', 'semaphore', 'orders')).toBe(
      'semaphore.orders.cdlf2zj3bfuiygugfytkgsqcu5',
    );
    expect(keyDirName('billing', 'mutex', 'orders')).toBe(
      'mutex.orders.d2i65bas3t6hzwxb25el5ifg6l',
    );
  });

  it('gives one safe, lower-case path component of at most 100 characters for any name', () => {
    for (const name of [...awkward, 'x'.repeat(10_000)]) {
      const key = keyDirName('', 'mutex', name);
      expect(key).toMatch(/^[a-z][a-z0-9_.-]*$/);
      expect(key.length).toBeLessThanOrEqual(100);
      expect(key.split('.')[0]).toBe('mutex'); // never starts with a dot, never '.' or '..'
    }
  });

  it('keeps names that differ only in case apart, even on case-insensitive file systems', () => {
    const upper = keyDirName('', 'mutex', 'Orders');
    const lower = keyDirName('', 'mutex', 'orders');
    expect(upper).not.toBe(lower);
    expect(upper.toLowerCase()).not.toBe(lower.toLowerCase());
  });

  it('stays inside the lock directory whatever the name', async () => {
    const provider = createProvider();
    const handles = [];
    for (const name of awkward) handles.push(await provider.createLock(name).acquire());
    const entries = readdirSync(directory);
    expect(entries.filter((entry) => entry !== '.spares')).toHaveLength(awkward.length);
    for (const handle of handles) await handle.release();
  });
});
