import { LockLostError } from '@lockkit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type EtcdLockProvider, lockPrefix, prefixEnd } from '../src/index.js';
import { etcdUrl, testProvider } from './support.js';

const providers: EtcdLockProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function provider(): EtcdLockProvider {
  const created = testProvider(etcdUrl(), { namespace: 'hand-over-test' });
  providers.push(created);
  return created;
}

/** The keys of mutex `name`: key, lease, create revision, value. */
async function keysOf(observer: EtcdLockProvider, name: string) {
  const prefix = lockPrefix('/lockkit/', 'hand-over-test', 'mutex', name);
  const response = await observer.client.kv.range({
    key: Buffer.from(prefix),
    range_end: prefixEnd(prefix),
  });
  return response.kvs.map((kv) => ({
    key: kv.key.toString(),
    lease: kv.lease,
    createRevision: BigInt(kv.create_revision),
    value: kv.value.toString(),
  }));
}

describe('hand-over on etcd', () => {
  it('the exporter’s close() keeps the key; resume moves it onto the resumer’s lease, once', async () => {
    const [a, b, c] = [provider(), provider(), provider()];
    const held = await a.createLock('moved').acquire();
    const exporterLease = a.leaseId;
    const token = held.export();
    await a.close(); // lets its lease run out instead of revoking it
    const [before] = await keysOf(b, 'moved');
    expect(before?.lease).toBe(exporterLease);
    expect(before?.createRevision).toBe(held.fencingToken);

    const resumed = await b.createLock('moved').resume(token);
    const [after] = await keysOf(b, 'moved');
    expect(after?.key).toBe(before?.key);
    expect(after?.createRevision).toBe(held.fencingToken);
    expect(after?.value).toBe(before?.value);
    expect(after?.lease).toBe(b.leaseId);
    expect(after?.lease).not.toBe(exporterLease);

    // Single use: the key is no longer on the exporter's lease.
    await expect(c.createLock('moved').resume(token)).rejects.toSatisfy(LockLostError.isInstance);
    expect(resumed.signal.aborted).toBe(false);
    expect(await c.createLock('moved').tryAcquire()).toBeNull();
    expect(await resumed.release()).toBe(true);
    expect(await keysOf(c, 'moved')).toEqual([]);
  });
});
