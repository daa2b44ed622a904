import {
  createMemberNetwork,
  type MemberNetwork,
  type NamespaceFirewall,
  NetworkNamespacesUnavailableError,
  namespaceFirewall,
  type ServerHandle,
  startTcpRelay,
  type TcpRelay,
} from '@lockkit/testkit';
import type { ProviderSpec } from '../backends/provider-spec.js';

/**
 * The network of a `--faults network` run: every worker in a network namespace of its own
 * (veth pair to a bridge, private 10.x addresses, see `createMemberNetwork`), reaching each
 * server through a TCP relay on the bridge's address. A fault cuts a worker's namespace off
 * from some relays with nftables (both keep running), drops a share of its packets, or has
 * the relays hold every chunk (delay: the kernel here has no `sch_netem`).
 */
export interface ChaosNetwork {
  /** The bridge address every relay listens on (what the workers' URLs point at). */
  readonly host: string;
  /** Per server of the backend (same order as `servers`), its relay. */
  readonly relays: readonly TcpRelay[];
  /** The spec a worker in a namespace uses: the server URLs rewritten to the relays. */
  readonly spec: ProviderSpec;
  /** The next namespace to start a worker in (round robin over `slots`). */
  nextNamespace(): string;
  firewallOf(namespace: string): NamespaceFirewall;
  /** A namespace's address (what the relays see as the worker's). */
  addressOf(namespace: string): string;
  /** Clears every rule and delay, closes the relays, removes the namespaces (never throws). */
  close(): Promise<void>;
}

/** Why `startChaosNetwork` could not make the network (printed as the skip reason). */
export class ChaosNetworkUnavailable extends Error {
  override readonly name = 'ChaosNetworkUnavailable';
}

function rewrite(url: string, server: ServerHandle, relay: TcpRelay): string {
  return url.replace(`${server.host}:${server.port}`, `${relay.host}:${relay.port}`);
}

/**
 * Makes `slots` namespaces and one relay per server. Rejects with
 * {@link ChaosNetworkUnavailable} where it cannot (not root, no iproute2 or nft, no servers).
 */
export async function startChaosNetwork(
  spec: ProviderSpec,
  servers: readonly ServerHandle[],
  slots: number,
): Promise<ChaosNetwork> {
  if (servers.length === 0) {
    throw new ChaosNetworkUnavailable(`${spec.backend} has no server to cut a worker off from`);
  }
  let network: MemberNetwork;
  try {
    network = await createMemberNetwork(slots);
  } catch (error) {
    if (error instanceof NetworkNamespacesUnavailableError) {
      throw new ChaosNetworkUnavailable(error.message);
    }
    throw error;
  }
  const relays: TcpRelay[] = [];
  try {
    for (const server of servers) {
      relays.push(
        await startTcpRelay({
          listenHost: network.bridgeAddress,
          targetHost: server.host,
          targetPort: server.port,
        }),
      );
    }
    // nft must work inside a namespace (Debian package nftables), or no fault can be made.
    await namespaceFirewall(network.namespaces[0]!).clear();
  } catch (error) {
    await Promise.allSettled(relays.map((relay) => relay.close()));
    await network.remove();
    throw new ChaosNetworkUnavailable(
      `cannot set up the relays and nftables: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let next = 0;
  return {
    host: network.bridgeAddress,
    relays,
    spec: {
      ...spec,
      urls: spec.urls.map((url, index) =>
        servers[index] && relays[index] ? rewrite(url, servers[index], relays[index]) : url,
      ),
    },
    nextNamespace: () => network.namespaces[next++ % network.namespaces.length]!,
    firewallOf: namespaceFirewall,
    addressOf: (namespace) => network.addresses[network.namespaces.indexOf(namespace)] ?? '',
    close: async () => {
      await Promise.allSettled(network.namespaces.map((ns) => namespaceFirewall(ns).clear()));
      await Promise.allSettled(relays.map((relay) => relay.close()));
      await network.remove();
    },
  };
}
