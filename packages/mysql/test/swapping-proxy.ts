import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of MariaDB that behaves like a connection pooler at its worst:
 * `swap()` moves every client to a fresh server session — logged in with the client's own
 * handshake response, which works for a user without a password (its auth data is empty,
 * whatever the server's scramble) — while the old session lives on, still holding its locks.
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
  /** The client's handshake response packet (sequence id 1), once seen. */
  login: Buffer | undefined;
  upstream: Socket;
  readonly retired: Socket[];
}

/** Length of the first complete MySQL packet in `data` (header included), or undefined. */
function firstPacketLength(data: Buffer): number | undefined {
  if (data.length < 4) return undefined;
  const length = 4 + data.readUIntLE(0, 3);
  return data.length >= length ? length : undefined;
}

export async function startSwappingProxy(host: string, port: number): Promise<SwappingProxy> {
  const links = new Set<Link>();
  const attach = (link: Link, upstream: Socket): void => {
    upstream.on('data', (data: Buffer) => {
      if (link.upstream === upstream) link.client.write(data);
    });
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => {
      if (link.upstream === upstream) link.client.destroy();
    });
  };
  const server: Server = createServer((client) => {
    const link: Link = { client, login: undefined, upstream: connect(port, host), retired: [] };
    links.add(link);
    attach(link, link.upstream);
    let first = Buffer.alloc(0);
    client.on('data', (data: Buffer) => {
      if (!link.login) {
        // The client speaks first after the server's greeting: its handshake response.
        first = Buffer.concat([first, data]);
        const length = firstPacketLength(first);
        if (length !== undefined) link.login = Buffer.from(first.subarray(0, length));
      }
      link.upstream.write(data);
    });
    client.on('close', () => {
      links.delete(link);
      link.upstream.destroy();
      for (const old of link.retired) old.destroy();
    });
    client.on('error', () => client.destroy());
  });
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

/** Logs a new session in with the client's handshake response; switches once it is OK. */
function swapLink(
  link: Link,
  host: string,
  port: number,
  attach: (link: Link, upstream: Socket) => void,
): Promise<void> {
  const login = link.login;
  if (!login) return Promise.reject(new Error('the client has not logged in yet'));
  return new Promise((resolve, reject) => {
    const fresh = connect(port, host);
    let pending = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      for (let length = firstPacketLength(pending); length !== undefined; ) {
        const packet = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (!greeted) {
          greeted = true;
          fresh.write(login); // the server's greeting: answer with the client's login
        } else if (packet[4] === 0x00) {
          fresh.removeListener('data', onData);
          link.retired.push(link.upstream); // the old session lives on, locks and all
          link.upstream = fresh;
          attach(link, fresh);
          resolve();
          return;
        } else {
          reject(new Error(`the new session was refused (packet type ${packet[4]})`));
          fresh.destroy();
          return;
        }
        length = firstPacketLength(pending);
      }
    };
    fresh.on('data', onData);
    fresh.once('error', reject);
  });
}
