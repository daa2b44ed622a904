import { type MemberNetwork, NetworkNamespacesUnavailableError } from './etcd-network.js';
import { etcdStatus } from './etcd-protocol.js';
import type { ServerHandle } from './server-handle.js';

const probeTimeoutMs = 2_000;

/** A cluster member: a server handle, plus a network partition where the cluster has one. */
export interface EtcdMember extends ServerHandle {
  /** Cuts the member off from the other members and all clients; it keeps running. */
  partition(): Promise<void>;
  /** Undoes {@link EtcdMember.partition}. */
  heal(): Promise<void>;
}

/** Several members forming one cluster; each member is a handle with its own fault hooks. */
export interface EtcdCluster extends AsyncDisposable {
  readonly members: readonly EtcdMember[];
  /** `etcd://127.0.0.1:P1,127.0.0.1:P2,…` (with namespaces: the members' own addresses) */
  readonly url: string;
  /** The members' client endpoints, `127.0.0.1:P`. */
  readonly hosts: readonly string[];
  /** The member that leads the cluster now (asks the members that answer). */
  leader(): Promise<EtcdMember>;
  /** Stops every member and removes their directories. */
  stop(): Promise<void>;
}

/** The cluster handle over its members (and their network, if it has one). */
export function cluster(servers: readonly ServerHandle[], network?: MemberNetwork): EtcdCluster {
  const members = servers.map((server, index): EtcdMember => {
    const unavailable = async (): Promise<void> => {
      throw new NetworkNamespacesUnavailableError(
        "partition() needs a cluster started with { network: 'namespaces' }",
      );
    };
    return Object.assign(server, {
      partition: network ? () => network.partition(index) : unavailable,
      heal: network ? () => network.heal(index) : unavailable,
    });
  });
  const hosts = members.map((member) => `${member.host}:${member.port}`);
  const stop = async (): Promise<void> => {
    // The data goes anyway: SIGKILL spares the graceful stop of members that lose quorum
    // under each other (about 6 s each).
    await Promise.allSettled(members.map((member) => member.kill()));
    const results = await Promise.allSettled(members.map((member) => member.stop()));
    await network?.remove();
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
  };
  // All members at once: one that is paused or cut off does not hold up the answer.
  const leader = (): Promise<EtcdMember> =>
    Promise.any(
      members.map(async (member) => {
        const status = await etcdStatus(member.host, member.port, probeTimeoutMs);
        if (status.leader !== status.memberId) throw new Error('not the leader');
        return member;
      }),
    ).catch(() => {
      throw new Error('no member of the etcd cluster says it leads');
    });
  return {
    members,
    hosts,
    url: `etcd://${hosts.join(',')}`,
    leader,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
