import { connect, type Socket } from 'node:net';
import type pg from 'pg';

/** What a protocol cancel request needs to know about a connected `pg` client. */
interface CancellableClient {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
  readonly host?: string;
  readonly port?: number;
}

const cancelRequestCode = 80877102;

/**
 * Sends a PostgreSQL protocol CancelRequest for whatever `client` is running right now, on a
 * new socket (no authentication and no `max_connections` slot needed; through PgBouncer the
 * pooler forwards it). Resolves `true` once the server has taken the request (it closes the
 * socket), `false` if it could not be delivered (custom `stream` connections, network
 * errors, no answer within `timeoutMs`). Never rejects.
 */
export function sendCancelRequest(client: pg.ClientBase, timeoutMs = 2000): Promise<boolean> {
  const { processID, secretKey, host, port } = client as unknown as CancellableClient;
  if (typeof processID !== 'number' || typeof secretKey !== 'number' || !host || !port) {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    let socket: Socket;
    try {
      socket = host.startsWith('/')
        ? connect(`${host}/.s.PGSQL.${port}`)
        : connect({ host, port, noDelay: true });
    } catch {
      resolve(false);
      return;
    }
    let sent = false;
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    timer.unref();
    socket.once('connect', () => {
      const packet = Buffer.alloc(16);
      packet.writeInt32BE(16, 0);
      packet.writeInt32BE(cancelRequestCode, 4);
      packet.writeInt32BE(processID, 8);
      packet.writeInt32BE(secretKey, 12);
      socket.write(packet, () => {
        sent = true;
      });
    });
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(sent);
    });
    // The server answers nothing and closes the socket once it has read the request.
    socket.on('data', () => {});
  });
}
