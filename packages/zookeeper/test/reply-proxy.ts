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
  /** An error code to put into the next request's reply, while armed. */
  #rewriteCode: number | undefined;
  /** Bytes of an incomplete reply frame, per client, while a rewrite is armed. */
  readonly #partial = new Map<Socket, Buffer>();

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

  /**
   * The next reply to a request (xid > 0; not a ping or a watch event) carries error `code`
   * instead of its own — e.g. a code newer than the client library knows. Arm it while the
   * connection is idle (frames are parsed from the next chunk on).
   */
  failNextReply(code: number): void {
    this.#rewriteCode = code;
  }

  /** Sends `frame` to every client as if the server had: a reply it may not be able to parse. */
  inject(frame: Buffer): void {
    for (const { client } of this.#pairs) if (!client.destroyed) client.write(frame);
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

  /** Complete frames of `data` (with a rewritten reply header, once); keeps the rest. */
  #rewrite(client: Socket, data: Buffer): Buffer {
    let buffer = Buffer.concat([this.#partial.get(client) ?? Buffer.alloc(0), data]);
    let end = 0;
    while (buffer.length - end >= 4 && buffer.length - end >= 4 + buffer.readInt32BE(end)) {
      const length = buffer.readInt32BE(end);
      // Reply header: xid (int32), zxid (int64), err (int32).
      if (this.#rewriteCode !== undefined && length >= 16 && buffer.readInt32BE(end + 4) > 0) {
        buffer = Buffer.from(buffer);
        buffer.writeInt32BE(this.#rewriteCode, end + 16);
        this.#rewriteCode = undefined;
      }
      end += 4 + length;
    }
    this.#partial.set(client, buffer.subarray(end));
    return buffer.subarray(0, end);
  }

  #pipe(client: Socket): void {
    const upstream = createConnection(this.#target);
    const pair = { client, upstream };
    this.#pairs.add(pair);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (data: Buffer) => {
      const chunk = this.#rewriteCode === undefined ? data : this.#rewrite(client, data);
      if (chunk.length === 0) return;
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
