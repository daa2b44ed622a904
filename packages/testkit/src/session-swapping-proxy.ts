import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a database that behaves like a connection pooler at its worst:
 * `swap()` moves every client to a fresh server session — logged in with the client's own
 * first message, which works for a user without a password — while the old session lives
 * on, still holding its locks. For tests of "the session changed under us" on 127.0.0.1.
 */
export interface SessionSwappingProxy {
  readonly port: number;
  /** Moves every idle, logged-in client to a new server session. */
  swap(): Promise<void>;
  close(): Promise<void>;
}

/** How one wire protocol logs a session in. */
export interface SessionLogin {
  /** Length of the client's login message at the start of `data`, once it is all there. */
  loginLength(data: Buffer): number | undefined;
  /**
   * Logs `fresh` in with the client's `login`, given `received`: every byte the server has
   * sent on it so far (empty on the first call). Returns true once the session is ready,
   * false to wait for more bytes; throws if the server refused.
   */
  login(fresh: Socket, login: Buffer, received: Buffer): boolean;
}

/** PostgreSQL: the startup packet; ready at ReadyForQuery ('Z'). */
export const postgresLogin: SessionLogin = {
  loginLength: (data) =>
    data.length >= 4 && data.length >= data.readInt32BE(0) ? data.readInt32BE(0) : undefined,
  login(fresh, login, received) {
    if (received.length === 0) fresh.write(login);
    // Messages are a type byte and an int32 length; look for ReadyForQuery.
    for (let at = 0; received.length - at >= 5; ) {
      const length = received.readInt32BE(at + 1);
      if (received.length - at < 1 + length) return false;
      if (received[at] === 0x5a) return true;
      at += 1 + length;
    }
    return false;
  },
};

/** Length of the first complete MySQL packet in `data` (its 4-byte header included). */
function mysqlPacketLength(data: Buffer, at = 0): number | undefined {
  if (data.length - at < 4) return undefined;
  const length = 4 + data.readUIntLE(at, 3);
  return data.length - at >= length ? length : undefined;
}

/**
 * MariaDB/MySQL: the client's handshake response (its auth data is empty without a password,
 * whatever the server's scramble); ready at the OK packet that follows it.
 */
export const mariaDbLogin: SessionLogin = {
  loginLength: (data) => mysqlPacketLength(data),
  login(fresh, login, received) {
    const greeting = mysqlPacketLength(received);
    if (greeting === undefined) return false;
    if (received.length === greeting) {
      fresh.write(login); // answered exactly once: nothing else can arrive before our answer
      return false;
    }
    const reply = mysqlPacketLength(received, greeting);
    if (reply === undefined) return false;
    if (received[greeting + 4] !== 0x00) {
      throw new Error(`the new session was refused (packet type ${received[greeting + 4]})`);
    }
    return true;
  },
};

interface Link {
  readonly client: Socket;
  login: Buffer | undefined;
  upstream: Socket;
  readonly retired: Socket[];
}

/** Starts a session-swapping proxy to `host:port` speaking `protocol`. */
export async function startSessionSwappingProxy(
  host: string,
  port: number,
  protocol: SessionLogin,
): Promise<SessionSwappingProxy> {
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
        first = Buffer.concat([first, data]);
        const length = protocol.loginLength(first);
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
  const swapLink = (link: Link): Promise<void> => {
    const login = link.login;
    if (!login) return Promise.reject(new Error('the client has not logged in yet'));
    return new Promise((resolve, reject) => {
      const fresh = connect(port, host);
      let received = Buffer.alloc(0);
      const step = (): void => {
        try {
          if (!protocol.login(fresh, login, received)) return;
        } catch (error) {
          fresh.destroy();
          reject(error);
          return;
        }
        fresh.removeListener('data', onData);
        link.retired.push(link.upstream); // the old session lives on, locks and all
        link.upstream = fresh;
        attach(link, fresh);
        resolve();
      };
      const onData = (chunk: Buffer): void => {
        received = Buffer.concat([received, chunk]);
        step();
      };
      fresh.on('data', onData);
      fresh.once('error', reject);
      step(); // protocols where the client speaks first send the login now
    });
  };
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async swap() {
      await Promise.all([...links].map(swapLink));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) link.client.destroy();
        server.close(() => resolve());
      }),
  };
}
