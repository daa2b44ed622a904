/**
 * The partition, loss and delay hooks the chaos run uses: a client in a network namespace of
 * its own talks to a real Redis server through `startTcpRelay` on the bridge's address;
 * `namespaceFirewall` cuts it off (or drops packets) while both keep running, the relay delays.
 * Needs root, iproute2 and nft; skipped, with the reason printed, where they are missing.
 */
import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createMemberNetwork,
  NetworkNamespacesUnavailableError,
  namespaceFirewall,
  type ServerHandle,
  startRedisServer,
  startTcpRelay,
  type TcpRelay,
} from '../src/index.js';
import { pollUntil } from '../src/redis-admin.js';

/** One PING from inside `namespace` (a fresh connection): the reply and how long it took. */
function ping(namespace: string, host: string, port: number, timeoutMs: number) {
  const script = `const s=require('net').connect(${port},'${host}');const t=performance.now();
s.setTimeout(${timeoutMs},()=>{console.log('timeout');process.exit(3)});s.on('error',e=>{console.log(e.code);process.exit(2)});
s.on('data',d=>{console.log(String(d).trim()+' '+Math.round(performance.now()-t));process.exit(0)});s.write('PING\\r\\n');`;
  return new Promise<{ reply: string; ms: number }>((resolve) => {
    execFile('ip', ['netns', 'exec', namespace, process.execPath, '-e', script], (_, stdout) => {
      const [reply = '', ms = '-1'] = stdout.trim().split(' ');
      resolve({ reply, ms: Number(ms) });
    });
  });
}

/** Resolves once `relay` has a client from `address` (a process in a namespace may start slowly). */
async function connected(relay: TcpRelay, address: string): Promise<void> {
  await pollUntil(
    async () => (relay.clientAddresses().includes(address) ? true : undefined),
    10_000,
    `a client from ${address}`,
  );
}

const missingNft = await new Promise<string | undefined>((resolve) =>
  execFile('nft', ['--version'], (error) =>
    resolve(error ? 'nft (Debian package nftables) is not installed' : undefined),
  ),
);
const network = missingNft
  ? new NetworkNamespacesUnavailableError(missingNft)
  : await createMemberNetwork(1).catch((error: unknown) => {
      if (error instanceof NetworkNamespacesUnavailableError) return error;
      throw error;
    });
const unavailable = network instanceof Error ? network.message : undefined;
if (unavailable) console.warn(`network fault tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('namespaceFirewall and startTcpRelay', () => {
  const net = network as Exclude<typeof network, Error>;
  const namespace = net.namespaces[0]!;
  const firewall = namespaceFirewall(namespace);
  let server: ServerHandle | undefined;
  let relay: TcpRelay | undefined;

  afterAll(async () => {
    await relay?.close();
    await server?.stop();
    await net.remove();
  });

  it('relays a namespace to a server on the host; isolate() cuts it off, clear() heals', async () => {
    server = await startRedisServer();
    relay = await startTcpRelay({
      listenHost: net.bridgeAddress,
      targetHost: server.host,
      targetPort: server.port,
    });
    expect((await ping(namespace, relay.host, relay.port, 2000)).reply).toBe('+PONG');
    await firewall.isolate(relay.host, [relay.port]);
    // Dropped, not refused: the connection attempt hangs until the client gives up.
    expect((await ping(namespace, relay.host, relay.port, 500)).reply).toBe('timeout');
    await firewall.clear();
    expect((await ping(namespace, relay.host, relay.port, 2000)).reply).toBe('+PONG');
  });

  it('lose(100) drops every packet, lose(0) none', async () => {
    await firewall.lose(100);
    expect((await ping(namespace, relay!.host, relay!.port, 500)).reply).toBe('timeout');
    await firewall.lose(0);
    expect((await ping(namespace, relay!.host, relay!.port, 2000)).reply).toBe('+PONG');
    await firewall.clear();
  });

  it('hold() stops relaying for an address at once, release() lets what waited through', async () => {
    relay!.hold(net.addresses[0]!);
    expect((await ping(namespace, relay!.host, relay!.port, 500)).reply).toBe('timeout');
    const during = ping(namespace, relay!.host, relay!.port, 3000);
    await connected(relay!, net.addresses[0]!); // its PING is sent and waits
    relay!.release(net.addresses[0]!);
    expect((await during).reply).toBe('+PONG');
  });

  it('clientAddresses() lists the address of each client connected now', async () => {
    expect(relay!.clientAddresses()).toEqual([]);
    relay!.hold(net.addresses[0]!);
    const during = ping(namespace, relay!.host, relay!.port, 3000);
    try {
      await connected(relay!, net.addresses[0]!);
      expect(relay!.clientAddresses()).toEqual([net.addresses[0]]);
    } finally {
      relay!.release(net.addresses[0]!);
    }
    expect((await during).reply).toBe('+PONG');
  });

  it('setDelay() holds each chunk in each direction', async () => {
    relay!.setDelay(150);
    const delayed = await ping(namespace, relay!.host, relay!.port, 3000);
    expect(delayed.reply).toBe('+PONG');
    expect(delayed.ms).toBeGreaterThanOrEqual(290); // there and back
    relay!.setDelay(0);
    expect((await ping(namespace, relay!.host, relay!.port, 2000)).ms).toBeLessThan(290);
  });

  it('a network stays up while more than ten others come and go (names are not reused)', async () => {
    // A long chaos run keeps its ZooKeeper ensemble's network up while every backend run
    // makes and removes one: the 11th once took the ensemble's names and deleted them.
    for (let made = 0; made < 12; made++) {
      const other = await createMemberNetwork(1);
      expect(other.namespaces[0]).not.toBe(namespace);
      expect(other.addresses[0]).not.toBe(net.addresses[0]);
      await other.remove();
    }
    expect((await ping(namespace, relay!.host, relay!.port, 2000)).reply).toBe('+PONG');
  });
});
