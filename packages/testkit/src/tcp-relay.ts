import { createServer, type Socket, connect as tcpConnect } from 'node:net';

/**
 * A userspace TCP relay from `listenHost:port` to `targetHost:targetPort` that can hold every
 * chunk for a while in each direction: the delay fault where the kernel has no `sch_netem`
 * (so no `tc qdisc … netem delay`). Chunks keep their order; a change of delay applies to
 * chunks read from then on.
 */
export interface TcpRelay {
  readonly host: string;
  readonly port: number;
  /** Current delay per chunk and direction, ms. */
  readonly delayMs: number;
  setDelay(ms: number): void;
  /**
   * Stops relaying (reading) in both directions for the clients at `address`, at once and
   * without loss: bytes wait in the kernel as they would behind a partition. New connections
   * from there wait too. A firewall rule takes a process start; this is synchronous.
   */
  hold(address: string): void;
  /** Relays for `address` again (what waited goes through). */
  release(address: string): void;
  /** Connections relayed right now. */
  readonly connections: number;
  /** The addresses of the clients connected now (one entry per connection). */
  clientAddresses(): string[];
  /** Stops listening and destroys every relayed connection. */
  close(): Promise<void>;
}

export interface TcpRelayOptions {
  readonly listenHost: string;
  readonly targetHost: string;
  readonly targetPort: number;
  readonly delayMs?: number;
}

/** Writes what `from` reads to `to`, each chunk no earlier than `delay()` ms after it arrived. */
function pipeDelayed(from: Socket, to: Socket, delay: () => number): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const drain = (): void => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.at <= now) to.write(queue.shift()!.chunk);
    if (queue.length > 0) timer = setTimeout(drain, queue[0]!.at - now);
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    const ms = delay();
    if (ms <= 0 && queue.length === 0) {
      to.write(chunk);
      return;
    }
    // Never before an earlier chunk: the order of a byte stream is kept.
    const at = Math.max(performance.now() + ms, queue.at(-1)?.at ?? 0);
    queue.push({ at, chunk });
    timer ??= setTimeout(drain, Math.max(0, at - performance.now()));
  });
  from.on('end', () => {
    ended = true;
    if (queue.length === 0) to.end();
  });
}

/** Starts a relay on a free port of `listenHost`. */
export function startTcpRelay(options: TcpRelayOptions): Promise<TcpRelay> {
  let delayMs = options.delayMs ?? 0;
  const sockets = new Set<Socket>();
  const held = new Set<string>();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const remoteOf = (client: Socket): string => (client.remoteAddress ?? '').replace(/^::ffff:/, '');
  const setFlow = (pair: { client: Socket; upstream: Socket }): void => {
    for (const socket of [pair.client, pair.upstream]) {
      if (held.has(remoteOf(pair.client))) socket.pause();
      else socket.resume();
    }
  };
  const server = createServer((client) => {
    const upstream = tcpConnect(options.targetPort, options.targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    client.once('close', () => pairs.delete(pair));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => {
        sockets.delete(socket);
        (socket === client ? upstream : client).destroy();
      });
    }
    pipeDelayed(client, upstream, () => delayMs);
    pipeDelayed(upstream, client, () => delayMs);
    setFlow(pair);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.listenHost, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({
        host: options.listenHost,
        port,
        get delayMs() {
          return delayMs;
        },
        setDelay: (ms) => {
          delayMs = ms;
        },
        hold: (clientAddress) => {
          held.add(clientAddress);
          for (const pair of pairs) setFlow(pair);
        },
        release: (clientAddress) => {
          held.delete(clientAddress);
          for (const pair of pairs) setFlow(pair);
        },
        get connections() {
          return Math.floor(sockets.size / 2);
        },
        clientAddresses: () =>
          [...pairs].filter((pair) => !pair.client.destroyed).map((pair) => remoteOf(pair.client)),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
