import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ControllableServer } from './controllable-server.js';
import { createMemberNetwork, type MemberNetwork } from './etcd-network.js';
import type { LaunchSpec, ManagedProcess } from './managed-process.js';
import { signalProcessTree } from './process-tree.js';
import type { ServerHandle } from './server-handle.js';
import {
  defaultStartTimeoutMs,
  launchAndWaitUntilReady,
  type ServerDefinition,
} from './server-launcher.js';
import { createTemporaryDirectory, removeTemporaryDirectory } from './temporary-directory.js';
import { sendFourLetterWord } from './zookeeper-protocol.js';
import {
  type ZooKeeperServerOptions,
  zooKeeperCommand,
  zooKeeperConfig,
  zooKeeperOperations,
} from './zookeeper-server.js';

const clientPort = 2181;
const probeTimeoutMs = 2_000;

/** An ensemble member: a server handle, plus a network partition. */
export interface ZooKeeperMember extends ServerHandle {
  /** Cuts the member off from the other members and all clients; it keeps running. */
  partition(): Promise<void>;
  /** Undoes {@link ZooKeeperMember.partition}. */
  heal(): Promise<void>;
  /** `leader`, `follower`, or undefined while it does not serve (its `srvr` answer). */
  mode(): Promise<string | undefined>;
}

/** A ZooKeeper ensemble whose members run in network namespaces of their own. */
export interface ZooKeeperEnsemble extends AsyncDisposable {
  readonly members: readonly ZooKeeperMember[];
  /** `zookeeper://A1:2181,A2:2181,…` (the members' addresses in their namespaces). */
  readonly url: string;
  /** The member that leads now (asks every member at once). */
  leader(): Promise<ZooKeeperMember>;
  /** Kills every member, removes their directories and the network. */
  stop(): Promise<void>;
}

async function modeOf(host: string): Promise<string | undefined> {
  const status = await sendFourLetterWord(host, clientPort, 'srvr', probeTimeoutMs).catch(() => '');
  return /^Mode: (\w+)/m.exec(status)?.[1];
}

/** One member's recipe: `ip netns exec <namespace> java … QuorumPeerMain zoo.cfg`. */
async function definitionOf(
  index: number,
  network: MemberNetwork,
  directory: string,
  options: ZooKeeperServerOptions,
): Promise<ServerDefinition> {
  const host = network.addresses[index]!;
  const dataDirectory = join(directory, 'data');
  await mkdir(dataDirectory);
  await writeFile(join(dataDirectory, 'myid'), `${index + 1}\n`);
  const config: Record<string, string> = {
    ...zooKeeperConfig(options, dataDirectory, clientPort, host),
    initLimit: '50',
    syncLimit: '5',
    ...Object.fromEntries(
      network.addresses.map((address, peer) => [`server.${peer + 1}`, `${address}:2888:3888`]),
    ),
    ...options.extraConfig,
  };
  const configPath = join(directory, 'zoo.cfg');
  await writeFile(
    configPath,
    Object.entries(config)
      .map(([name, value]) => `${name}=${value}\n`)
      .join(''),
  );
  const command = zooKeeperCommand('org.apache.zookeeper.server.quorum.QuorumPeerMain', configPath);
  const logPath = join(directory, 'zookeeper.log');
  return {
    operations: zooKeeperOperations,
    host,
    temporaryDirectory: directory,
    dataDirectory,
    logPath,
    startTimeoutMs: options.startTimeoutMs ?? defaultStartTimeoutMs,
    url: (port) => `zookeeper://${host}:${port}`,
    // `ip netns exec` execs java in place: the pid stays the member's.
    launchSpec: () => ({
      command: 'ip',
      args: ['netns', 'exec', network.namespaces[index]!, ...command],
      logPath,
      cwd: directory,
      temporaryDirectory: directory,
    }),
  };
}

/**
 * Starts a throwaway ZooKeeper ensemble of `size` members (Debian's `zookeeper` package, run
 * as `QuorumPeerMain`), each in a network namespace of its own made with
 * {@link createMemberNetwork} (root and iproute2; rejects with
 * `NetworkNamespacesUnavailableError` where it cannot), and waits until every member serves.
 * `tickTimeMs` defaults to 200 ms; `syncLimit` is 5 ticks, so a follower cut off from the
 * leader stops serving about a second later.
 */
export async function startZooKeeperEnsemble(
  size = 3,
  options: ZooKeeperServerOptions = {},
): Promise<ZooKeeperEnsemble> {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`startZooKeeperEnsemble: size must be a positive integer, got ${size}`);
  }
  const network = await createMemberNetwork(size);
  const directories: string[] = [];
  try {
    for (let index = 0; index < size; index++) {
      directories.push(await createTemporaryDirectory('zookeeper'));
    }
    const definitions = await Promise.all(
      directories.map((directory, index) => definitionOf(index, network, directory, options)),
    );
    // Started together: a member serves only once a quorum of its peers is up.
    const launched = await Promise.allSettled(
      definitions.map((definition) => launchAndWaitUntilReady(definition, clientPort)),
    );
    const failure = launched.find((result) => result.status === 'rejected');
    if (failure !== undefined) {
      for (const result of launched) {
        if (result.status === 'fulfilled') signalProcessTree(result.value.pid, 'SIGKILL');
      }
      throw (failure as PromiseRejectedResult).reason;
    }
    const members = definitions.map((definition, index): ZooKeeperMember => {
      const spec = definition.launchSpec(clientPort) as LaunchSpec;
      const server = new ControllableServer({
        operations: zooKeeperOperations,
        host: definition.host,
        port: clientPort,
        url: definition.url(clientPort),
        temporaryDirectory: definition.temporaryDirectory,
        dataDirectory: definition.dataDirectory,
        logPath: definition.logPath,
        command: [spec.command, ...spec.args],
        process: (launched[index] as PromiseFulfilledResult<ManagedProcess>).value,
        relaunch: () => launchAndWaitUntilReady(definition, clientPort),
      });
      return Object.assign(server, {
        partition: () => network.partition(index),
        heal: () => network.heal(index),
        mode: () => modeOf(definition.host),
      });
    });
    const stop = async (): Promise<void> => {
      await Promise.allSettled(members.map((member) => member.kill()));
      const results = await Promise.allSettled(members.map((member) => member.stop()));
      await network.remove();
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    };
    const leader = async (): Promise<ZooKeeperMember> => {
      const modes = await Promise.all(members.map((member) => member.mode()));
      const found = members[modes.indexOf('leader')];
      if (!found)
        throw new Error(`no member of the ZooKeeper ensemble leads (${modes.join(', ')})`);
      return found;
    };
    return {
      members,
      url: `zookeeper://${members.map((member) => `${member.host}:${clientPort}`).join(',')}`,
      leader,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await Promise.allSettled(directories.map((directory) => removeTemporaryDirectory(directory)));
    await network.remove();
    throw error;
  }
}
