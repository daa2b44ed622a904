import { describe, expect, it } from 'vitest';
import {
  base32,
  int64Key,
  KEY_MAPPING_VERSION,
  keyFamily,
  type LockRequest,
  memoizeKeys,
  readableKey,
} from '../src/for-backends.js';

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

  it('names with lone surrogates stay distinct (UTF-8 would turn each into U+FFFD)', () => {
    const keys = ['\ud800', '\udc00', '\ufffd', 'a\ud83d', 'a\ud83e'].map((name) =>
      readableKey('', 'mutex', name),
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(int64Key('ns\ud800', 'mutex', 'x')).not.toBe(int64Key('ns\udc00', 'mutex', 'x'));
    // A NUL in the namespace cannot shift the boundary between namespace and name.
    expect(int64Key('a', 'mutex', 'b\0c')).not.toBe(int64Key('a\0b', 'mutex', 'c'));
    // A well-formed surrogate pair keeps its version-1 (UTF-8) key.
    expect(readableKey('', 'mutex', '🔒')).toBe(readableKey('', 'mutex', '\ud83d\udd12'));
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

describe('memoizeKeys', () => {
  const request = (kind: LockRequest['kind'], name: string, namespace = ''): LockRequest => ({
    kind,
    name,
    namespace,
    maxCount: 1,
  });

  it('derives once per (namespace, family, name); a RW lock’s modes share; bounded', () => {
    const derived: string[] = [];
    const keysOf = memoizeKeys((r) => {
      derived.push(`${r.namespace}/${r.kind}/${r.name}`);
      return { key: `${r.namespace}:${keyFamily(r.kind)}:${r.name}` };
    }, 3);
    const first = keysOf(request('mutex', 'a'));
    expect(keysOf(request('mutex', 'a'))).toBe(first); // memoised: the same object
    expect(keysOf(request('read', 'a'))).toBe(keysOf(request('write', 'a'))); // one family
    expect(keysOf(request('mutex', 'a', 'tenant')).key).toBe('tenant:mutex:a'); // namespaces differ
    expect(keysOf(request('semaphore', 'a')).key).toBe(':semaphore:a');
    expect(derived).toEqual(['/mutex/a', '/read/a', 'tenant/mutex/a', '/semaphore/a']);
    // Four entries were held past the limit of 3: the memo was cleared once on the way.
    keysOf(request('mutex', 'a'));
    expect(derived.length).toBe(5);
  });
});
