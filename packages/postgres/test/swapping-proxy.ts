import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that behaves like a transaction pooler at its worst:
 * `swap()` moves every client to a fresh server session (started with the client's own
 * startup packet; trust auth) while the old session lives on, still holding its locks.
 * Only for tests on 127.0.0.1.
 */
export interface SwappingProxy {
  readonly port: number;
  /** Moves every idle client to a new server session. */
  swap(): Promise<void>;
  close(): Promise<void>;
}

interface Link {
  readonly client: Socket;
  readonly startup: Buffer;
  upstream: Socket;
  readonly retired: Socket[];
}

export async function startSwappingProxy(host: string, port: number): Promise<SwappingProxy> {
  const links = new Set<Link>();
  const server: Server = createServer((client) => {
    let buffered = Buffer.alloc(0);
    const onFirst = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 4 || buffered.length < buffered.readInt32BE(0)) return;
      client.removeListener('data', onFirst);
      const startup = buffered.subarray(0, buffered.readInt32BE(0));
      const upstream = connect(port, host);
      const link: Link = { client, startup, upstream, retired: [] };
      links.add(link);
      upstream.write(buffered);
      attach(link, upstream);
      client.on('data', (data: Buffer) => link.upstream.write(data));
      client.on('close', () => {
        links.delete(link);
        link.upstream.destroy();
        for (const old of link.retired) old.destroy();
      });
      client.on('error', () => client.destroy());
    };
    client.on('data', onFirst);
  });
  const attach = (link: Link, upstream: Socket): void => {
    upstream.on('data', (data: Buffer) => {
      if (link.upstream === upstream) link.client.write(data);
    });
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => {
      if (link.upstream === upstream) link.client.destroy();
    });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async swap() {
      await Promise.all([...links].map((link) => swapLink(link, host, port, attach)));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) link.client.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Starts a new server session with the client's startup packet; switches once it is ready. */
function swapLink(
  link: Link,
  host: string,
  port: number,
  attach: (link: Link, upstream: Socket) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fresh = connect(port, host);
    let pending = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      // Skip messages (type byte + length) until ReadyForQuery ('Z').
      while (pending.length >= 5) {
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) return;
        const type = String.fromCharCode(pending[0]!);
        pending = pending.subarray(1 + length);
        if (type === 'Z') {
          fresh.removeListener('data', onData);
          link.retired.push(link.upstream); // the old session lives on, locks and all
          link.upstream = fresh;
          attach(link, fresh);
          resolve();
          return;
        }
      }
    };
    fresh.on('data', onData);
    fresh.once('error', reject);
    fresh.write(link.startup);
  });
}
