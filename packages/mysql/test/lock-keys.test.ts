import { describe, expect, it } from 'vitest';
import { lockKeys, mutexKey } from '../src/index.js';

describe('name → GET_LOCK name mapping (v1, golden)', () => {
  it('pins the mutex keys: lower-case readable prefix + hash of the original name', () => {
    expect(mutexKey('', 'orders:42')).toBe('mutex.orders_42.rienmik5352xot7hresmfk6j2t');
    expect(mutexKey('', 'Orders:42')).toBe('mutex.orders_42.3s2chtsqt7324lcvfyzbj4e2nb');
    expect(mutexKey('app', 'orders:42')).toBe('mutex.orders_42.jpldazhe7rlwh7wylussy4g5hs');
    expect(mutexKey('', '')).toBe('mutex.736axzszd6ujbspwk7htfwyv5m');
    expect(mutexKey('', 'Ünïcödé 🔒')).toBe('mutex._n_c_d____.xeukxlpdlyxu2ersp7tbirawaw');
    expect(mutexKey('', "' OR 1=1 --")).toBe('mutex.__or_1_1_--.teg3h3z2eqgxqay65fodv5vtto');
    expect(mutexKey('', 'x'.repeat(300))).toBe(
      'mutex.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.ai67bqylyabxzidvlmhlue65e5',
    );
  });

  it('pins the RW and semaphore names (base + suffix)', () => {
    const rw = lockKeys({ name: 'Orders:42', namespace: 'app', kind: 'write', maxCount: 1 });
    expect(rw.base).toBe('rw.orders_42.aiamtqgsreajxs7g6ylcissg3c');
    expect(rw.gate).toBe('rw.orders_42.aiamtqgsreajxs7g6ylcissg3c.w');
    expect(rw.queue).toBe('rw.orders_42.aiamtqgsreajxs7g6ylcissg3c.q');
    expect(rw.slot(63)).toBe('rw.orders_42.aiamtqgsreajxs7g6ylcissg3c.r63');
    const reader = lockKeys({ name: 'Orders:42', namespace: 'app', kind: 'read', maxCount: 1 });
    expect(reader.gate).toBe(rw.gate); // both modes share one RW lock
    const semaphore = lockKeys({
      name: 'Orders:42',
      namespace: 'app',
      kind: 'semaphore',
      maxCount: 3,
    });
    expect(semaphore.base).toBe('semaphore.orders_42.4upraato2bvq3o2b7vjy2d6xxi');
    expect(semaphore.slot(2 ** 31 - 2)).toBe(
      'semaphore.orders_42.4upraato2bvq3o2b7vjy2d6xxi.s2147483646',
    );
  });

  it('every name fits GET_LOCK (≤ 64 lower-case ASCII characters), even the longest slot', () => {
    for (const name of ['', 'A'.repeat(10_000), '名前'.repeat(100), '\0', 'MiXeD']) {
      for (const kind of ['mutex', 'read', 'semaphore'] as const) {
        const keys = lockKeys({ name, namespace: 'N'.repeat(500), kind, maxCount: 2 ** 31 - 1 });
        for (const key of [keys.base, keys.gate, keys.queue, keys.slot(2 ** 31 - 2)]) {
          expect(key.length).toBeLessThanOrEqual(64);
          expect(key).toMatch(/^[a-z0-9_.-]+$/);
        }
      }
    }
  });

  it('names that differ only in case (or in replaced characters) get different keys', () => {
    expect(mutexKey('', 'Lock')).not.toBe(mutexKey('', 'lock'));
    expect(mutexKey('', 'a:b')).not.toBe(mutexKey('', 'a/b'));
    expect(mutexKey('a', 'b')).not.toBe(mutexKey('', 'b'));
  });
});
