import { describe, expect, it } from 'vitest';
import { base32, int64Key, KEY_MAPPING_VERSION, keyFamily, readableKey } from '../src/index.js';

// Golden values: if one of these changes, existing deployments would stop seeing each
// other's locks. Never edit them; add a new mapping version instead.
describe('name → key mapping v1 (golden)', () => {
  it('is version 1', () => {
    expect(KEY_MAPPING_VERSION).toBe(1);
  });

  it('readableKey', () => {
    expect(readableKey('', 'mutex', 'orders/42')).toBe(
      'mutex.orders_42.qiorgjzqiq2ej4f4eh42ysgmz5',
    );
    expect(readableKey('', 'mutex', '')).toMatchInlineSnapshot(
      `"mutex.736axzszd6ujbspwk7htfwyv5m"`,
    );
    expect(readableKey('app', 'write', 'Orders')).toMatchInlineSnapshot(
      `"rw.Orders.h4mreod2dheg45wysrylzj2ziu"`,
    );
    expect(readableKey('app', 'read', 'Orders')).toBe(readableKey('app', 'write', 'Orders'));
    expect(
      readableKey('', 'semaphore', 'Ünïcödé 🔒', { lowercase: true, maxLength: 64 }),
    ).toMatchInlineSnapshot(`"semaphore._n_c_d____.ytnwttvz4iixunncjrvsgjazkr"`);
  });

  it('int64Key', () => {
    expect(int64Key('', 'mutex', 'orders/42')).toBe(-9071073015419882428n);
    expect(int64Key('app', 'semaphore', 'x')).toMatchInlineSnapshot(`-1870801807550966740n`);
  });

  it('base32 follows RFC 4648 (lowercase, no padding)', () => {
    expect(base32(Buffer.from('foobar'))).toBe('mzxw6ytboi');
    expect(base32(Buffer.from(''))).toBe('');
  });
});

describe('key properties', () => {
  it('names differing only in case get different keys, also when lowercased', () => {
    const upper = readableKey('', 'mutex', 'Lock', { lowercase: true });
    const lower = readableKey('', 'mutex', 'lock', { lowercase: true });
    expect(upper).not.toBe(lower);
    expect(upper).toBe(upper.toLowerCase());
  });

  it('namespaces and families separate keys', () => {
    expect(readableKey('a', 'mutex', 'x')).not.toBe(readableKey('b', 'mutex', 'x'));
    expect(readableKey('', 'mutex', 'x')).not.toBe(readableKey('', 'semaphore', 'x'));
    expect(int64Key('a', 'mutex', 'x')).not.toBe(int64Key('b', 'mutex', 'x'));
    expect(keyFamily('read')).toBe('rw');
  });

  it('respects maxLength for any name and keeps only safe characters', () => {
    for (const name of ['', '../../etc/passwd', 'x'.repeat(10_000), '\0', "' OR 1=1 --"]) {
      const key = readableKey('ns', 'mutex', name, { maxLength: 64 });
      expect(key.length).toBeLessThanOrEqual(64);
      expect(key).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(key).not.toContain('..');
    }
  });
});
