/**
 * `startEtcdCluster(3, { network: 'namespaces' })`: members in network namespaces of their own,
 * and `partition()` / `heal()` per member. Needs root and iproute2; skipped, with the reason
 * printed, where the namespaces cannot be made.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { etcdGateway } from '../src/etcd-protocol.js';
import {
  type EtcdMember,
  NetworkNamespacesUnavailableError,
  startEtcdCluster,
} from '../src/index.js';
import { connectionError } from './support.js';

const timeScale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);
const base64 = (text: string): string => Buffer.from(text).toString('base64');
const tag = `lke${process.pid % 100_000}`;

const put = (member: EtcdMember, key: string, value: string, timeoutMs = 5000): Promise<unknown> =>
  etcdGateway(
    member.host,
    member.port,
    '/v3/kv/put',
    { key: base64(key), value: base64(value) },
    timeoutMs,
  );

async function get(member: EtcdMember, key: string): Promise<string | undefined> {
  const reply = await etcdGateway<{ kvs?: { value?: string }[] }>(
    member.host,
    member.port,
    '/v3/kv/range',
    { key: base64(key) },
    2000,
  );
  const value = reply.kvs?.[0]?.value;
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString();
}

/** This process's namespaces and links (every one the test kit makes starts with `tag`). */
function leftovers(): string[] {
  const namespaces = execFileSync('ip', ['netns', 'list']).toString().split('\n');
  const links = execFileSync('ip', ['-brief', 'link']).toString().split('\n');
  return [...namespaces, ...links].filter((line) => line.startsWith(tag));
}

const started = await startEtcdCluster(3, { network: 'namespaces' }).catch((error: unknown) => {
  if (error instanceof NetworkNamespacesUnavailableError) return error;
  throw error;
});
const unavailable = started instanceof Error ? started.message : undefined;
if (unavailable) console.warn(`etcd partition tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("startEtcdCluster(3, { network: 'namespaces' })", () => {
  const cluster = started as Exclude<typeof started, Error>;

  it('runs each member in its own namespace under its own pid, at an address of its own', () => {
    expect(new Set(cluster.members.map((member) => member.host)).size).toBe(3);
    for (const member of cluster.members) {
      // `ip netns exec` execs etcd: the handle's pid is etcd's, so pause/kill act on it.
      expect(readFileSync(`/proc/${member.pid}/comm`, 'utf8').trim()).toBe('etcd');
      expect(readFileSync(`/proc/${member.pid}/cmdline`, 'utf8')).toContain(member.host);
    }
    expect(leftovers().length).toBeGreaterThanOrEqual(3 + 3 + 1); // namespaces, veths, bridge
  });

  it('partition() cuts a member off from clients and peers while it runs; heal() lets it catch up', async () => {
    const leader = await cluster.leader();
    const cut = cluster.members.find((member) => member !== leader)!;
    await put(leader, 'before', 'one');
    await cut.partition();
    // Packets are dropped, not refused: a request times out.
    await expect(get(cut, 'before')).rejects.toThrow();
    expect(readFileSync(`/proc/${cut.pid}/stat`, 'utf8').split(' ')[2]).not.toBe('T');
    await put(leader, 'during', 'two'); // the other two still make a quorum
    await cut.heal();
    const deadline = performance.now() + 10_000 * timeScale;
    let seen: string | undefined;
    while (seen !== 'two' && performance.now() < deadline) {
      seen = await get(cut, 'during').catch(() => undefined);
    }
    expect(seen).toBe('two');
    expect(await connectionError(cut.host, cut.port)).toBeUndefined();
  }, 30_000);

  it('stop() removes every namespace, veth pair and bridge it made', async () => {
    await cluster.stop();
    expect(leftovers()).toEqual([]);
  }, 30_000);

  it('a start that fails removes what it made too', async () => {
    const failing = startEtcdCluster(3, {
      network: 'namespaces',
      extraArguments: ['--no-such-flag'],
    });
    await expect(failing).rejects.toThrow(/no-such-flag/);
    expect(leftovers()).toEqual([]);
  }, 30_000);
});
