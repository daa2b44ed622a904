import type { LockKind } from 'lockkit';
import type { LockTarget } from '../invocation.js';
import { importBeside } from './import-beside.js';
import type { Holder, InspectReport } from './inspect-report.js';
import { askServer } from './server-error.js';

/** ms to wait for etcd to connect and to answer. */
const serverTimeoutMs = 10_000;

type Decision = { readonly action: string };

interface EtcdBackendModule {
  lockPrefix(keyPrefix: string, namespace: string, kind: LockKind, name: string): string;
  prefixEnd(prefix: string): Buffer;
  kindOfKey(prefix: string, key: string): LockKind | undefined;
  /** Absent in @lockkit/etcd before weighted permits (every key then takes one). */
  permitsOfKey?(prefix: string, key: string): number;
  decide(
    kind: LockKind,
    maxCount: number,
    queue: readonly { key: string; kind: LockKind; permits?: number; createRevision: bigint }[],
    own: string,
  ): Decision;
}

interface KeyValue {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly create_revision: string;
  readonly lease: string;
}

interface EtcdClient {
  readonly kv: {
    range(request: object, options: object): Promise<{ kvs: KeyValue[] }>;
  };
  readonly leaseClient: {
    leaseTimeToLive(request: object, options: object): Promise<{ TTL: string }>;
  };
  close(): void;
}

interface Etcd3Module {
  Etcd3: new (options: {
    hosts: string[];
    auth?: { username: string; password: string };
    dialTimeout: number;
  }) => EtcdClient;
}

/**
 * Asks etcd: the keys in the lock's queue in create-revision order, each with the host and
 * pid its provider wrote into it and its lease's remaining TTL; which of them hold the lock
 * is decided by the same recipe the backend uses.
 */
export async function inspectEtcd(
  options: Readonly<Record<string, unknown>>,
  name: string,
  target: LockTarget,
  lock: string,
): Promise<InspectReport> {
  const backend = await importBeside<EtcdBackendModule>('etcd', '@lockkit/etcd');
  const { Etcd3 } = await importBeside<Etcd3Module>('etcd', '@lockkit/etcd', 'etcd3');
  const namespace = typeof options['namespace'] === 'string' ? options['namespace'] : '';
  const keyPrefix = typeof options['keyPrefix'] === 'string' ? options['keyPrefix'] : '/lockkit/';
  const hosts = options['hosts'] as string[];
  const auth = options['auth'] as { username: string; password: string } | undefined;
  const address = hosts.map((host) => host.replace(/^https?:\/\//, '')).join(',');
  const maxCount =
    target.kind === 'semaphore' ? target.maxCount : target.kind === 'read' ? Infinity : 1;
  const prefix = backend.lockPrefix(keyPrefix, namespace, target.kind, name);
  const client = new Etcd3({ hosts, dialTimeout: serverTimeoutMs, ...(auth && { auth }) });
  const deadline = (): { deadline: Date } => ({ deadline: new Date(Date.now() + serverTimeoutMs) });
  try {
    const { kvs } = await askServer('etcd', address, () =>
      client.kv.range(
        {
          key: Buffer.from(prefix),
          range_end: backend.prefixEnd(prefix),
          sort_target: 'Create',
          sort_order: 'Ascend',
        },
        deadline(),
      ),
    );
    const entries = kvs.flatMap((kv) => {
      const key = kv.key.toString();
      const kind = backend.kindOfKey(prefix, key);
      const permits = backend.permitsOfKey?.(prefix, key) ?? 1;
      return kind ? [{ kv, key, kind, permits, createRevision: BigInt(kv.create_revision) }] : [];
    });
    const ttls = new Map<string, number>();
    for (const lease of new Set(entries.map((entry) => entry.kv.lease))) {
      const answer = await askServer('etcd', address, () =>
        client.leaseClient.leaseTimeToLive({ ID: lease }, deadline()),
      );
      ttls.set(lease, Number(answer.TTL));
    }
    const holders: Holder[] = [];
    const waiters: Holder[] = [];
    for (const entry of entries) {
      const decision = backend.decide(entry.kind, maxCount, entries, entry.key);
      const granted = decision.action === 'granted';
      const described = describe(entry.kv, entry.kind, granted, target, ttls.get(entry.kv.lease));
      (granted ? holders : waiters).push(described);
    }
    return {
      backend: 'etcd',
      lock,
      canTell: true,
      holders,
      waiters,
      notes: [
        'one lease per provider: every lock a provider holds is on it, and ends with it',
        "the fencing token of a holder is its key's create revision (etcd's store revision)",
      ],
    };
  } finally {
    client.close();
  }
}

function describe(
  kv: KeyValue,
  kind: LockKind,
  granted: boolean,
  target: LockTarget,
  ttlSeconds: number | undefined,
): Holder {
  let owner: { host?: unknown; pid?: unknown } = {};
  try {
    owner = JSON.parse(kv.value.toString()) as typeof owner;
  } catch {
    // written by something else: show what is known
  }
  const host = typeof owner.host === 'string' ? owner.host : null;
  const pid = typeof owner.pid === 'number' ? owner.pid : null;
  const role = !granted
    ? 'waiting'
    : target.kind === 'semaphore'
      ? 'permit'
      : target.kind === 'mutex'
        ? 'holder'
        : kind === 'read'
          ? 'reader'
          : 'writer';
  const leaseHex = BigInt(kv.lease).toString(16);
  return {
    role,
    summary:
      `pid ${pid ?? '?'} on ${host ?? '?'}, lease ${leaseHex}` +
      `${ttlSeconds === undefined || ttlSeconds < 0 ? '' : ` (${ttlSeconds} s left)`}, token ${kv.create_revision}` +
      (granted || target.kind === 'mutex' || target.kind === 'semaphore' ? '' : ` (${kind})`),
    details: {
      host,
      pid,
      lease: leaseHex,
      leaseTtlSeconds: ttlSeconds ?? null,
      fencingToken: kv.create_revision,
      kind,
      key: kv.key.toString(),
    },
  };
}
