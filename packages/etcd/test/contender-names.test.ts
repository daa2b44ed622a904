import { afterEach, describe, expect, it } from 'vitest';
import { type EtcdLockProvider, lockPrefix, prefixEnd } from '../src/index.js';
import { ContenderNames } from '../src/lock-keys.js';
import { etcdUrl, testProvider } from './support.js';

const providers: EtcdLockProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function provider(): EtcdLockProvider {
  const created = testProvider(etcdUrl(), { namespace: 'names-test' });
  providers.push(created);
  return created;
}

/** Every key name the queue of `name` ever had since `fromRevision` (its history in etcd). */
async function namesSince(
  observer: EtcdLockProvider,
  kind: 'mutex' | 'semaphore',
  name: string,
  fromRevision: bigint,
): Promise<Set<string>> {
  const prefix = lockPrefix('/lockkit/', 'names-test', kind, name);
  const names = new Set<string>();
  const now = await observer.client.kv.range({
    key: Buffer.from(prefix),
    range_end: prefixEnd(prefix),
  });
  // Each revision's puts under the prefix: the keys that were created or written since.
  for (let revision = fromRevision; revision <= BigInt(now.header.revision); revision++) {
    const read = await observer.client.kv.range({
      key: Buffer.from(prefix),
      range_end: prefixEnd(prefix),
      revision: revision.toString(),
      keys_only: true,
    });
    for (const kv of read.kvs) names.add(kv.key.toString());
  }
  return names;
}

async function revisionOf(observer: EtcdLockProvider): Promise<bigint> {
  return BigInt((await observer.client.kv.range({ key: Buffer.from('/') })).header.revision);
}

describe('contender keys used again', () => {
  it('an uncontended lock takes its key again after each release: one key in its history, tokens still rising', async () => {
    const locks = provider();
    const lock = locks.createLock('again');
    const from = (await revisionOf(locks)) + 1n;
    const keys = new Set<string>();
    let last = 0n;
    for (let i = 0; i < 20; i++) {
      const handle = await lock.acquire();
      keys.add(locks.keyOf(handle));
      expect(handle.fencingToken).toBeGreaterThan(last);
      last = handle.fencingToken;
      expect(await handle.release()).toBe(true);
    }
    expect(keys.size).toBe(1);
    expect(await namesSince(locks, 'mutex', 'again', from)).toEqual(keys);
  });

  it('holders at the same time have keys of their own; a released key goes to the next contender', async () => {
    const locks = provider();
    const semaphore = locks.createSemaphore('shared', 3);
    const held = [await semaphore.acquire(), await semaphore.acquire(), await semaphore.acquire()];
    const keys = held.map((handle) => locks.keyOf(handle));
    expect(new Set(keys).size).toBe(3);
    expect(await held[1]!.release()).toBe(true);
    const next = await semaphore.acquire();
    expect(locks.keyOf(next)).toBe(keys[1]);
    expect(next.fencingToken).toBeGreaterThan(held[2]!.fencingToken);
    for (const handle of [held[0]!, held[2]!, next]) expect(await handle.release()).toBe(true);
  });

  it('a key whose release etcd did not confirm (broken by an operator) is not taken again', async () => {
    const locks = provider();
    const lock = locks.createLock('broken');
    const first = await lock.acquire();
    const key = locks.keyOf(first);
    expect(await lock.forceRelease()).toBe(1);
    expect(await first.release()).toBe(false);
    const second = await lock.acquire();
    expect(locks.keyOf(second)).not.toBe(key);
    await second.release();
  });

  it('keeps a few free keys per queue and forgets the queues used least recently', () => {
    const names = new ContenderNames();
    const taken = Array.from({ length: 6 }, () => names.take('/q/', 'mutex'));
    for (const key of taken) names.giveBack(key);
    const again = Array.from({ length: 6 }, () => names.take('/q/', 'mutex'));
    expect(again.filter((key) => taken.includes(key))).toHaveLength(4);
    expect(new Set(again).size).toBe(6);
    const weighted = names.take('/q/', 'semaphore', 3);
    expect(weighted).toMatch(/^\/q\/permits-3\.[0-9a-f-]{36}$/);
    names.giveBack(weighted);
    expect(names.take('/q/', 'semaphore', 3)).toBe(weighted);
    expect(names.take('/q/', 'semaphore', 2)).not.toBe(weighted);
  });

  it('remembers the 1,000 queues used most recently', () => {
    const names = new ContenderNames();
    const keys = Array.from({ length: 1001 }, (_, queue) => names.take(`/q${queue}/`, 'mutex'));
    for (const key of keys) names.giveBack(key);
    expect(names.take('/q0/', 'mutex')).not.toBe(keys[0]);
    expect(names.take('/q1/', 'mutex')).toBe(keys[1]);
    expect(names.take('/q1000/', 'mutex')).toBe(keys[1000]);
  });
});
