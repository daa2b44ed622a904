import { connect } from 'node:net';

/**
 * Opens a TCP connection, writes `request`, and collects bytes until `complete` says the reply
 * is whole (or the server closes the connection), then closes it. Rejects on connection errors
 * and when `timeoutMs` runs out (a paused server never answers).
 *
 * @param complete returns the parsed reply once `received` holds all of it, else `undefined`.
 */
export function exchange<Reply>(
  host: string,
  port: number,
  request: Buffer,
  timeoutMs: number,
  complete: (received: Buffer, closed: boolean) => Reply | undefined,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (error: Error | undefined, reply?: Reply): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error === undefined) resolve(reply as Reply);
      else reject(error);
    };
    const timer = setTimeout(
      () => finish(new Error(`no reply from ${host}:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const attempt = (closed: boolean): void => {
      let reply: Reply | undefined;
      try {
        reply = complete(received, closed);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (reply !== undefined) finish(undefined, reply);
      else if (closed) finish(new Error(`${host}:${port} closed the connection before replying`));
    };
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      attempt(false);
    });
    socket.on('end', () => attempt(true));
    socket.on('close', () => attempt(true));
    socket.on('error', (error) => finish(error));
  });
}
