import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ControllableServer } from './controllable-server.js';
import { serversFromEnvironment } from './environment-overrides.js';
import { cluster, type EtcdCluster } from './etcd-cluster.js';
import { createMemberNetwork, type MemberNetwork } from './etcd-network.js';
import { checkEtcdMember, revokeAllLeases } from './etcd-protocol.js';
import { findExecutable } from './executables.js';
import { ExternalServer } from './external-server.js';
import { findFreePort } from './free-port.js';
import type { LaunchSpec, ManagedProcess } from './managed-process.js';
import { signalProcessTree } from './process-tree.js';
import { ServerStartError } from './readiness.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  launchAndWaitUntilReady,
  type ServerDefinition,
  startControllableServer,
  withTemporaryDirectory,
} from './server-launcher.js';
import type { ServerOperations } from './server-operations.js';
import type { ServerStartOptions } from './start-options.js';
import { createTemporaryDirectory, removeTemporaryDirectory } from './temporary-directory.js';

export type { EtcdCluster, EtcdMember } from './etcd-cluster.js';

/** Options for {@link startEtcd} and {@link startEtcdCluster}. */
export interface EtcdServerOptions extends ServerStartOptions {
  /**
   * Raft heartbeat interval. The default of 50 ms (with a 500 ms election timeout) lets
   * clients use lease TTLs down to 1 s and elects a new leader within about a second.
   */
  readonly heartbeatIntervalMs?: number;
  /** Raft election timeout; default 500 ms. The smallest lease TTL is 1.5 × this, in seconds. */
  readonly electionTimeoutMs?: number;
  /** More `etcd` arguments, e.g. `['--max-txn-ops', '1024']`. */
  readonly extraArguments?: readonly string[];
  /**
   * `startEtcdCluster` only. `'namespaces'`: each member runs in a network namespace of its
   * own (needs root and iproute2), so `member.partition()` can cut it off; default `'loopback'`.
   */
  readonly network?: 'loopback' | 'namespaces';
}

const probeTimeoutMs = 2_000;
const host = '127.0.0.1';

/** etcd probes and server-side commands. The member's name is its data directory's name. */
export const etcdOperations: ServerOperations = {
  kind: 'etcd',
  gracefulStopSignal: 'SIGTERM',
  async checkReady(target) {
    const name = basename(target.dataDirectory ?? '');
    await checkEtcdMember(target.host, target.port, name, probeTimeoutMs);
  },
  // etcd cannot close client connections; it can end every client's session instead.
  dropClientConnections: (target) => revokeAllLeases(target.host, target.port, probeTimeoutMs * 5),
};

interface Member {
  readonly name: string;
  /** The member's temporary directory (its data and log live inside). */
  readonly directory: string;
  readonly dataDirectory: string;
  readonly logPath: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly host: string;
  /** The network namespace it runs in, if any. */
  readonly namespace?: string | undefined;
}

function memberArguments(
  member: Member,
  initialCluster: string,
  token: string,
  options: EtcdServerOptions,
): string[] {
  const clientUrl = `http://${member.host}:${member.clientPort}`;
  const peerUrl = `http://${member.host}:${member.peerPort}`;
  return [
    ...['--name', member.name, '--data-dir', member.dataDirectory],
    ...['--listen-client-urls', clientUrl, '--advertise-client-urls', clientUrl],
    ...['--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl],
    ...['--initial-cluster', initialCluster, '--initial-cluster-token', token],
    ...['--initial-cluster-state', 'new'],
    ...['--heartbeat-interval', String(options.heartbeatIntervalMs ?? 50)],
    ...['--election-timeout', String(options.electionTimeoutMs ?? 500)],
    // As etcd 3.5 and later run by default: a member that comes back from a partition with a
    // higher term does not depose a working leader (3.4, Debian's, leaves it off; without it a
    // heal costs a leader election, long enough under load for a client to declare its lease
    // lost).
    '--pre-vote',
    ...['--logger', 'zap', '--log-outputs', 'stderr', '--log-level', 'warn'],
    ...(options.extraArguments ?? []),
  ];
}

function definitionOf(
  member: Member,
  args: readonly string[],
  options: EtcdServerOptions,
): ServerDefinition {
  const temporaryDirectory = member.directory;
  const executable = findExecutable(['etcd'], 'etcd-server');
  // `ip netns exec` execs etcd in place: the pid stays the member's.
  const command = member.namespace ? ['ip', 'netns', 'exec', member.namespace, executable] : [];
  return {
    operations: etcdOperations,
    host: member.host,
    temporaryDirectory,
    dataDirectory: member.dataDirectory,
    logPath: member.logPath,
    startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
    url: (port) => `etcd://${member.host}:${port}`,
    launchSpec: () => ({
      command: command[0] ?? executable,
      args: [...command.slice(1), ...args],
      logPath: member.logPath,
      cwd: temporaryDirectory,
      temporaryDirectory,
      ...(options.environment && { env: { ...process.env, ...options.environment } }),
    }),
  };
}

/** A member in a temporary directory of its own, named after it (unique on the machine). */
async function newMember(directory: string, network?: MemberNetwork, index = 0): Promise<Member> {
  const name = basename(directory);
  const where = {
    directory,
    dataDirectory: join(directory, name),
    logPath: join(directory, 'etcd.log'),
  };
  // A namespace has all its ports to itself.
  if (network) {
    const inside = { host: network.addresses[index]!, namespace: network.namespaces[index] };
    return { name, ...where, ...inside, clientPort: 2379, peerPort: 2380 };
  }
  const ports = { clientPort: await findFreePort(host), peerPort: await findFreePort(host) };
  return { name, ...where, host, ...ports };
}

async function launchCluster(
  members: readonly Member[],
  options: EtcdServerOptions,
): Promise<ServerHandle[]> {
  const initialCluster = members
    .map((member) => `${member.name}=http://${member.host}:${member.peerPort}`)
    .join(',');
  const token = members[0]!.name;
  const args = members.map((member) => memberArguments(member, initialCluster, token, options));
  const definitions = members.map((member, index) => definitionOf(member, args[index]!, options));
  // Started together: a member is ready only once a quorum of its peers is up.
  const launched = await Promise.allSettled(
    definitions.map((definition, index) =>
      launchAndWaitUntilReady(definition, members[index]!.clientPort),
    ),
  );
  const failure = launched.find((result) => result.status === 'rejected');
  if (failure !== undefined) {
    await Promise.allSettled(
      launched.map((result) =>
        result.status === 'fulfilled' ? killQuietly(result.value) : undefined,
      ),
    );
    throw (failure as PromiseRejectedResult).reason;
  }
  return definitions.map((definition, index) => {
    const port = members[index]!.clientPort;
    const spec = definition.launchSpec(port) as LaunchSpec;
    return new ControllableServer({
      operations: etcdOperations,
      host: definition.host,
      port,
      url: definition.url(port),
      temporaryDirectory: definition.temporaryDirectory,
      dataDirectory: definition.dataDirectory,
      logPath: definition.logPath,
      command: [spec.command, ...spec.args],
      process: (launched[index] as PromiseFulfilledResult<ManagedProcess>).value,
      relaunch: () => launchAndWaitUntilReady(definition, port),
    });
  });
}

async function startLocalCluster(size: number, options: EtcdServerOptions): Promise<EtcdCluster> {
  const network = options.network === 'namespaces' ? await createMemberNetwork(size) : undefined;
  const directories: string[] = [];
  try {
    for (let index = 0; index < size; index++) {
      directories.push(await createTemporaryDirectory('etcd'));
    }
    for (let attempt = 1; ; attempt++) {
      const members = await Promise.all(
        directories.map((directory, index) => newMember(directory, network, index)),
      );
      try {
        return cluster(await launchCluster(members, options), network);
      } catch (error) {
        // Retry on other ports if one was taken meanwhile.
        if (!(error instanceof ServerStartError && error.addressInUse && attempt < 3)) throw error;
        for (const member of members)
          await rm(member.dataDirectory, { recursive: true, force: true });
      }
    }
  } catch (error) {
    await Promise.allSettled(directories.map((directory) => removeTemporaryDirectory(directory)));
    await network?.remove();
    throw error;
  }
}

async function killQuietly(member: ManagedProcess): Promise<void> {
  signalProcessTree(member.pid, 'SIGKILL');
  await member.exited;
}

/**
 * Starts a throwaway cluster of `size` etcd members (Debian's `etcd-server` package) on
 * private loopback ports, each with its own data directory, and waits until it has a leader.
 * `pause()`, `kill()` and `restart()` of a member act on that member alone. Not taken from
 * the environment: a cluster's members must be controllable.
 */
export async function startEtcdCluster(
  size = 3,
  options: EtcdServerOptions = {},
): Promise<EtcdCluster> {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`startEtcdCluster: size must be a positive integer, got ${size}`);
  }
  return startLocalCluster(size, options);
}

/**
 * Starts a throwaway single-member etcd on a free port: `etcd://127.0.0.1:PORT`. When
 * `LOCKKIT_ETCD_URL` is set, returns a handle for that server instead, which is not
 * controllable.
 */
export async function startEtcd(options: EtcdServerOptions = {}): Promise<ServerHandle> {
  const fromEnvironment =
    options.useEnvironment === false ? undefined : serversFromEnvironment('etcd');
  if (fromEnvironment?.[0] !== undefined) return new ExternalServer(fromEnvironment[0]);
  return withTemporaryDirectory('etcd', async (directory) => {
    const peerPort = await findFreePort(host);
    const member = (clientPort: number): Member => ({
      name: basename(directory),
      directory,
      dataDirectory: join(directory, basename(directory)),
      logPath: join(directory, 'etcd.log'),
      clientPort,
      peerPort,
      host,
    });
    const initialCluster = `${basename(directory)}=http://${host}:${peerPort}`;
    const definition = (port: number): ServerDefinition =>
      definitionOf(
        member(port),
        memberArguments(member(port), initialCluster, basename(directory), options),
        options,
      );
    return startControllableServer({
      ...definition(0),
      launchSpec: (port) => definition(port).launchSpec(port),
    });
  });
}
