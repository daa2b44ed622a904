import { describe, expect, inject, it } from 'vitest';
import { advisoryKey, releaseChannel, slotKey } from '../src/index.js';
import { advisoryLocks, Harness, uniqueName } from './support.js';

const harness = new Harness(inject('lockkitServers').postgresUrl!);

describe('name → key mapping (v1, golden)', () => {
  it('mutex, RW and semaphore keys are pinned', () => {
    const golden: [string, string, string, string, string][] = [
      // name, mutex, rw (read and write), semaphore, mutex in namespace "app"
      [
        '',
        '-73170409979139952',
        '-8711141046939341512',
        '-7749498279531165004',
        '7281380455162673630',
      ],
      [
        'orders:42',
        '-8500308857864620681',
        '-8769551486650556974',
        '-2937737429589478768',
        '5464608407757281123',
      ],
      [
        'Ünïcödé 🔒 名前',
        '-4606876522729966810',
        '-9145387532992214663',
        '-5125111965423005103',
        '-8287652900939218710',
      ],
      [
        "' OR 1=1 --",
        '-7418075171155341960',
        '7453734185639547615',
        '267766614623156885',
        '861803911718099364',
      ],
      [
        '\0',
        '-1667864480510473355',
        '-3332532829903470196',
        '-7546893927132471901',
        '-6553539266305588278',
      ],
    ];
    for (const [name, mutex, rw, semaphore, namespaced] of golden) {
      expect(String(advisoryKey('', 'mutex', name))).toBe(mutex);
      expect(String(advisoryKey('', 'read', name))).toBe(rw);
      expect(String(advisoryKey('', 'write', name))).toBe(rw);
      expect(String(advisoryKey('', 'semaphore', name))).toBe(semaphore);
      expect(String(advisoryKey('app', 'mutex', name))).toBe(namespaced);
    }
  });

  it('slot keys are the semaphore key XOR the slot; channels are pinned identifiers', () => {
    const base = advisoryKey('', 'semaphore', 'orders:42');
    expect(String(slotKey(base, 0))).toBe('-2937737429589478768');
    expect(String(slotKey(base, 5))).toBe('-2937737429589478763');
    expect(String(slotKey(base, 2 ** 31 - 2))).toBe('-2937737430728651410');
    expect(releaseChannel('', '')).toBe('lockkit_sr2eax4vbnfljbk7aecpajxjb4');
    expect(releaseChannel('', 'orders:42')).toBe('lockkit_245q6x3b6mzjbffuuhqfscxhvu');
    expect(releaseChannel('', "' OR 1=1 --")).toMatch(/^lockkit_[a-z2-7]{26}$/);
  });

  it('the server computes the same keys: text → ::bigint and slot XOR agree, pg_locks shows them', async () => {
    const client = await harness.client();
    const keys = [
      advisoryKey('', 'mutex', ''),
      -(2n ** 63n),
      2n ** 63n - 1n,
      advisoryKey('', 'semaphore', 'orders:42'),
    ];
    for (const key of keys) {
      const echoed = await client.query<{ key: string; slot: string }>(
        'SELECT $1::bigint::text AS key, ($1::bigint # 2147483646::bigint)::text AS slot',
        [key.toString()],
      );
      expect(echoed.rows[0]!.key).toBe(key.toString());
      expect(echoed.rows[0]!.slot).toBe(slotKey(key, 2 ** 31 - 2).toString());
    }
    const name = uniqueName('pg-locks');
    const provider = harness.provider();
    const mutex = await provider.createLock(name).acquire();
    const permit = await provider.createSemaphore(name, 1).acquire();
    expect(await advisoryLocks(client, advisoryKey('', 'mutex', name))).toEqual([
      { pid: provider.backendPidOf(mutex), mode: 'ExclusiveLock', granted: true },
    ]);
    expect(await advisoryLocks(client, slotKey(advisoryKey('', 'semaphore', name), 0))).toEqual([
      { pid: provider.backendPidOf(permit), mode: 'ExclusiveLock', granted: true },
    ]);
    await mutex.release();
    await permit.release();
    expect(await advisoryLocks(client, advisoryKey('', 'mutex', name))).toEqual([]);
  });

  it('namespaces isolate applications: the same name in two namespaces is two locks', async () => {
    const name = uniqueName('namespaces');
    const a = await harness.provider({ namespace: 'a' }).createLock(name).tryAcquire();
    const b = await harness.provider({ namespace: 'b' }).createLock(name).tryAcquire();
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(await harness.provider({ namespace: 'a' }).createLock(name).tryAcquire()).toBeNull();
    await a?.release();
    await b?.release();
  });
});
