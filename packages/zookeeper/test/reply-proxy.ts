import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real ZooKeeper that can hold back the server's replies (the
 * requests still reach the server), to inject "the request was applied but its reply was
 * lost or late" — the failure a protected create exists for.
 */
export class ReplyProxy {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<{ client: Socket; upstream: Socket }>();
  readonly #held: { client: Socket; chunk: Buffer }[] = [];
  #holding = false;

  private constructor(server: Server, target: { host: string; port: number }) {
    this.#server = server;
    this.#target = target;
    server.on('connection', (client) => this.#pipe(client));
  }

  /** Starts a proxy to `url` (`host:port`). */
  static async start(url: string): Promise<ReplyProxy> {
    const [host = '127.0.0.1', port = '0'] = url.replace(/^zookeeper:\/\//, '').split(':');
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new ReplyProxy(server, { host, port: Number(port) });
  }

  /** `host:port` clients connect to. */
  get url(): string {
    return `127.0.0.1:${(this.#server.address() as { port: number }).port}`;
  }

  /** From now on, replies are held back (requests still go through). */
  holdReplies(): void {
    this.#holding = true;
  }

  /** Delivers the held replies late, in order, and stops holding. */
  deliverHeld(): void {
    this.#holding = false;
    for (const { client, chunk } of this.#held.splice(0))
      if (!client.destroyed) client.write(chunk);
  }

  /** Drops the held replies and cuts every connection (the client sees CONNECTION_LOSS). */
  dropHeldAndDisconnect(): void {
    this.#holding = false;
    this.#held.length = 0;
    for (const { client, upstream } of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
  }

  async close(): Promise<void> {
    this.dropHeldAndDisconnect();
    this.#server.close();
    await once(this.#server, 'close');
  }

  #pipe(client: Socket): void {
    const upstream = createConnection(this.#target);
    const pair = { client, upstream };
    this.#pairs.add(pair);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (this.#holding) this.#held.push({ client, chunk });
      else client.write(chunk);
    });
    const end = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  }
}
