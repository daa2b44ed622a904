import { connect } from 'node:net';
import { exchange } from './socket-exchange.js';

/** Sends a four-letter word (`srvr`, `conf`, `dump`, …) and returns the whole answer. */
export function sendFourLetterWord(
  host: string,
  port: number,
  word: string,
  timeoutMs: number,
): Promise<string> {
  return exchange(host, port, Buffer.from(word), timeoutMs, (received, closed) =>
    closed ? received.toString('utf8') : undefined,
  );
}

/** Session ids of the connections listed by the `cons` four-letter word (`sid=0x…`). */
export function parseConnectionSessionIds(cons: string): bigint[] {
  const ids = new Set<bigint>();
  for (const match of cons.matchAll(/\bsid=0x([0-9a-f]+)/gi)) ids.add(BigInt(`0x${match[1]}`));
  ids.delete(0n);
  return [...ids];
}

/** Session ids listed in the `SessionTracker dump` section of the `dump` four-letter word. */
export function parseSessionIds(dump: string): bigint[] {
  const start = dump.indexOf('SessionTracker dump:');
  const end = dump.indexOf('ephemeral nodes dump:');
  const section = dump.slice(start === -1 ? 0 : start, end === -1 ? undefined : end);
  const ids = new Set<bigint>();
  for (const match of section.matchAll(/^\s+0x([0-9a-f]+)\s*$/gim))
    ids.add(BigInt(`0x${match[1]}`));
  return [...ids];
}

const randomMask = (1n << 48n) - 1n;
const randomMultiplier = 0x5deece66dn;

/**
 * The password ZooKeeper gives session `sessionId`: the server derives it as
 * `new java.util.Random(sessionId ^ 0xB3415C00L).nextBytes(new byte[16])`
 * (`ZooKeeperServer.generatePasswd`), so it can be recomputed from the id.
 */
export function sessionPassword(sessionId: bigint): Buffer {
  let seed = (BigInt.asIntN(64, sessionId ^ 0xb3415c00n) ^ randomMultiplier) & randomMask;
  const password = Buffer.alloc(16);
  let index = 0;
  while (index < password.length) {
    seed = (seed * randomMultiplier + 0xbn) & randomMask;
    let random = Number(BigInt.asIntN(32, seed >> 16n));
    for (let count = Math.min(password.length - index, 4); count > 0; count -= 1) {
      password[index] = random & 0xff;
      index += 1;
      random >>= 8;
    }
  }
  return password;
}

function connectRequest(sessionId: bigint, password: Buffer, sessionTimeoutMs: number): Buffer {
  const body = Buffer.alloc(4 + 8 + 4 + 8 + 4 + password.length + 1);
  let offset = body.writeInt32BE(0, 0); // protocol version
  offset = body.writeBigInt64BE(0n, offset); // last zxid seen
  offset = body.writeInt32BE(sessionTimeoutMs, offset);
  offset = body.writeBigInt64BE(BigInt.asIntN(64, sessionId), offset);
  offset = body.writeInt32BE(password.length, offset);
  offset += password.copy(body, offset);
  body.writeInt8(0, offset); // read-only: no
  return framed(body);
}

function framed(body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length, 0);
  return Buffer.concat([length, body]);
}

const closeSessionOperation = -11;

function closeSessionRequest(): Buffer {
  const request = Buffer.alloc(8);
  request.writeInt32BE(1, 0); // xid
  request.writeInt32BE(closeSessionOperation, 4);
  return framed(request);
}

/**
 * Closes ZooKeeper session `sessionId` from outside its client: reconnects to it with its
 * recomputed password (the server then drops the client's own connection) and sends
 * `closeSession` in the same write, before the client can reconnect and take the session back.
 * The session ends, its ephemeral nodes go, and its client is told the session expired when it
 * reconnects.
 *
 * @returns `true` when the session was closed, `false` when it had already ended.
 */
export function closeZooKeeperSession(
  host: string,
  port: number,
  sessionId: bigint,
  timeoutMs: number,
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    let connected = false;
    let settled = false;
    const finish = (error: Error | undefined, closed = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error === undefined) resolve(closed);
      else reject(error);
    };
    const timer = setTimeout(
      () => finish(new Error(`ZooKeeper ${host}:${port} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('connect', () => {
      const password = sessionPassword(sessionId);
      socket.write(
        Buffer.concat([connectRequest(sessionId, password, 30_000), closeSessionRequest()]),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        if (received.length < 4) return;
        const length = received.readInt32BE(0);
        if (received.length < 4 + length) return;
        const frame = received.subarray(4, 4 + length);
        received = received.subarray(4 + length);
        if (!connected) {
          connected = true;
          // A negotiated timeout of 0 means the session had already ended.
          if (frame.readInt32BE(4) <= 0) {
            finish(undefined, false);
            return;
          }
        } else {
          const errorCode = frame.readInt32BE(12);
          finish(undefined, errorCode === 0);
          return;
        }
      }
    });
    socket.on('close', () => finish(undefined, false));
    socket.on('error', (error) => finish(error));
  });
}
