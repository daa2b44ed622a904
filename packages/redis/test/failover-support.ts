import type { ServerHandle } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import type { RedisLockProvider } from '../src/index.js';
import { eventually } from './support.js';

/** Runs one command on a server (a fresh connection). */
export async function command(server: ServerHandle, ...args: string[]): Promise<unknown> {
  const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(args[0] as string, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/**
 * Cuts replication off `primary`'s replicas for good (until {@link healReplication}): each
 * replica is given a wrong `masterauth` (the primary has no password, so every reconnect fails
 * its handshake) and the primary drops their links. What the primary writes from now on
 * reaches no replica — the window a crash in production hits by chance.
 */
export async function cutReplication(
  primary: ServerHandle,
  replicas: readonly ServerHandle[],
): Promise<void> {
  // What was written before the cut reaches the replicas first (the tests count on the
  // earlier grants being there; replicas acknowledge their offset about once a second).
  const written = Number(
    /master_repl_offset:(\d+)/.exec(String(await command(primary, 'INFO', 'replication')))?.[1],
  );
  // Generous bounds (scaled): a loaded machine delays the replicas' acknowledgements.
  await eventually(async () => {
    const info = String(await command(primary, 'INFO', 'replication'));
    const acked = [...info.matchAll(/^slave\d+:.*offset=(\d+)/gm)].map((match) => Number(match[1]));
    return acked.length >= replicas.length && acked.every((offset) => offset >= written);
  }, 30_000);
  for (const replica of replicas) await command(replica, 'CONFIG', 'SET', 'masterauth', 'wrong');
  await command(primary, 'CLIENT', 'KILL', 'TYPE', 'replica');
  await eventually(async () => {
    const info = String(await command(primary, 'INFO', 'replication'));
    return info.includes('connected_slaves:0');
  }, 30_000);
}

/** The servers among `servers` that run as replicas now (a killed one answers nothing). */
export async function replicasAmong(servers: readonly ServerHandle[]): Promise<ServerHandle[]> {
  const roles = await Promise.all(
    servers.map((server) =>
      command(server, 'ROLE').then(
        (reply) => String((reply as unknown[])[0]),
        () => 'down',
      ),
    ),
  );
  return servers.filter((_, index) => roles[index] === 'slave');
}

/** Undoes {@link cutReplication} on the replicas that still run. */
export async function healReplication(replicas: readonly ServerHandle[]): Promise<void> {
  for (const replica of replicas) {
    await command(replica, 'CONFIG', 'SET', 'masterauth', '').catch(() => undefined);
  }
}

/** Resolves once `primary` has `count` replicas online. */
export function replicasOnline(primary: ServerHandle, count: number): Promise<void> {
  return eventually(async () => {
    const info = String(await command(primary, 'INFO', 'replication'));
    return (info.match(/state=online/g) ?? []).length >= count;
  }, 60_000); // Sentinel re-points the other replicas one at a time after the failover
}

/** Takes and releases the mutex `name`, returning its fencing token. */
export async function tokenOf(provider: RedisLockProvider, name: string): Promise<bigint> {
  const handle = await provider.createLock(name).acquire({ timeout: 20_000 });
  await handle.release();
  return handle.fencingToken;
}
