import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdGateway } from '../src/etcd-protocol.js';
import {
  type EtcdCluster,
  NetworkNamespacesUnavailableError,
  type ServerHandle,
  startEtcd,
  startEtcdCluster,
} from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';
import { connectionError, pauseProbeMs, settlesWithin } from './support.js';

/** Polls `condition` until it holds (for state with no event to await). */
async function waitFor(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

function put(
  server: ServerHandle,
  key: string,
  value: string,
  options: { lease?: string; timeoutMs?: number } = {},
): Promise<unknown> {
  const body = {
    key: base64(key),
    value: base64(value),
    ...(options.lease && { lease: options.lease }),
  };
  return etcdGateway(server.host, server.port, '/v3/kv/put', body, options.timeoutMs ?? 5000);
}

async function get(server: ServerHandle, key: string): Promise<string | undefined> {
  const reply = await etcdGateway<{ kvs?: { value?: string }[] }>(
    server.host,
    server.port,
    '/v3/kv/range',
    { key: base64(key) },
    5000,
  );
  const value = reply.kvs?.[0]?.value;
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString();
}

describe('startEtcd', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await startEtcd({ useEnvironment: false });
  });

  afterAll(async () => {
    await server.stop();
  });

  it('serves requests and grants 1 s leases (heartbeat 50 ms, election 500 ms)', async () => {
    expect(server.url).toBe(`etcd://127.0.0.1:${server.port}`);
    await put(server, 'kept', 'yes');
    expect(await get(server, 'kept')).toBe('yes');
    const lease = await etcdGateway<{ TTL: string }>(
      server.host,
      server.port,
      '/v3/lease/grant',
      { TTL: 1 },
      5000,
    );
    expect(lease.TTL).toBe('1');
  });

  it('pause() holds requests until resume()', async () => {
    await server.pause();
    const pending = get(server, 'kept');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect(await pending).toBe('yes');
  });

  it('dropClientConnections() revokes every lease: keys on a lease vanish', async () => {
    const { ID } = await etcdGateway<{ ID: string }>(
      server.host,
      server.port,
      '/v3/lease/grant',
      { TTL: 60 },
      5000,
    );
    await put(server, 'on-lease', 'x', { lease: ID });
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    expect(await get(server, 'on-lease')).toBeUndefined();
    expect(await get(server, 'kept')).toBe('yes');
  });

  it('kill() makes connections fail; restart() keeps port and data', async () => {
    const { port, pid } = server;
    await server.kill();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await connectionError(server.host, port)).toBe('ECONNREFUSED');
    await server.restart();
    expect(server.port).toBe(port);
    expect(await get(server, 'kept')).toBe('yes');
  });

  it('stop() ends the process and removes the temporary directory', async () => {
    const { pid, temporaryDirectory } = server.describe();
    await server.stop();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(existsSync(temporaryDirectory!)).toBe(false);
  });
});

describe('startEtcdCluster', () => {
  let cluster: EtcdCluster;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  });

  afterAll(async () => {
    await cluster.stop();
  });

  it('starts three members on their own ports and directories, as one cluster', async () => {
    expect(cluster.members).toHaveLength(3);
    expect(new Set(cluster.members.map((member) => member.port)).size).toBe(3);
    const directories = cluster.members.map((member) => member.describe().dataDirectory);
    expect(new Set(directories).size).toBe(3);
    expect(cluster.url).toBe(`etcd://${cluster.hosts.join(',')}`);
    // A loopback cluster has nothing to cut.
    await expect(cluster.members[0]!.partition()).rejects.toThrow(
      NetworkNamespacesUnavailableError,
    );
    await put(cluster.members[0]!, 'shared', 'one');
    expect(await get(cluster.members[2]!, 'shared')).toBe('one');
  });

  it('elects a new leader when the leader (leader()) is killed; the member rejoins after restart()', async () => {
    const victim = await cluster.leader();
    const [first, second] = cluster.members.filter(
      (member) => member !== victim,
    ) as ServerHandle[] as [ServerHandle, ServerHandle];
    await victim.kill();
    expect(await connectionError(victim.host, victim.port)).toBe('ECONNREFUSED');
    // A write sent before the election ends times out on the server: retry until one lands.
    const write = (): Promise<boolean> =>
      put(first, 'during', 'two', { timeoutMs: 1000 }).then(
        () => true,
        () => false,
      );
    await waitFor(write, 10_000, 'a write');
    expect(await get(second, 'during')).toBe('two');
    await victim.restart();
    expect(await get(victim, 'during')).toBe('two');
  });

  it('stop() ends every member and removes their directories', async () => {
    const infos = cluster.members.map((member) => member.describe());
    await cluster.stop();
    for (const info of infos) {
      expect(isProcessAlive(info.pid!)).toBe(false);
      expect(existsSync(info.temporaryDirectory!)).toBe(false);
    }
  });
});
