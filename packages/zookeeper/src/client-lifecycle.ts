/**
 * Workarounds for gaps of node-zookeeper-client's connection handling, for clients lockkit
 * owns. They reach into the library's `connectionManager` (1.1.x).
 *
 * @module
 */
import { delay } from '@lockkit/core/backend';
import { ZkManagerState, type ZooKeeperClient } from './zookeeper-client.js';

interface SocketLike {
  destroy(): void;
  ref(): unknown;
  unref(): unknown;
}

interface ConnectionManagerLike {
  state: number;
  socket?: SocketLike | undefined;
  spinDelay?: number;
  servers?: readonly unknown[];
  connectTimeoutHandler?: NodeJS.Timeout | null;
  connectionStringParser?: { connectionString?: string };
  connect(): void;
  setState(state: number): void;
  onSocketError(error: Error): void;
  onSocketClosed(hadError: boolean): void;
  onSocketConnected(): void;
  onSocketData(buffer: Buffer): void;
  pendingBuffer?: Buffer | null;
  on(event: 'state', listener: (state: number) => void): unknown;
  removeListener(event: 'state', listener: (state: number) => void): unknown;
}

function managerOf(client: ZooKeeperClient): ConnectionManagerLike | undefined {
  return (client as unknown as { connectionManager?: ConnectionManagerLike }).connectionManager;
}

/** The connection string a client was created with (for error messages), if it says. */
export function connectionStringOf(client: ZooKeeperClient): string | undefined {
  return managerOf(client)?.connectionStringParser?.connectionString;
}

/** How many servers the client tries in turn (1 if it does not say). */
export function serverCountOf(client: ZooKeeperClient): number {
  return managerOf(client)?.servers?.length ?? 1;
}

/** Whether the client's connection manager is connected right now. */
export function isConnected(client: ZooKeeperClient): boolean {
  return managerOf(client)?.state === ZkManagerState.CONNECTED;
}

/**
 * Reports every connection attempt that failed with an error: the library swallows the
 * socket's error (refused, unknown host) and silently tries the next server, forever.
 * `listener` gets the error of each socket that failed before the client got connected (an
 * attempt cut off by a timer, without an error, is not reported). Must be called before the
 * client's first `connect()`.
 */
export function onConnectFailure(client: ZooKeeperClient, listener: (error: Error) => void): void {
  const manager = managerOf(client);
  if (!manager) return;
  let lastError: Error | undefined;
  const onSocketError = manager.onSocketError;
  const onSocketClosed = manager.onSocketClosed;
  // The library binds these per socket when it connects: own properties take effect then.
  manager.onSocketError = function (this: ConnectionManagerLike, error: Error): void {
    lastError = error;
    onSocketError.call(this, error);
  };
  manager.onSocketClosed = function (this: ConnectionManagerLike, hadError: boolean): void {
    const failed = this.state === ZkManagerState.CONNECTING;
    const error = lastError;
    lastError = undefined;
    if (failed && error) listener(error);
    onSocketClosed.call(this, hadError);
  };
}

/**
 * Turns a reply the library cannot parse into a dropped connection instead of a crash. Its
 * socket `data` handler throws on a packet it does not expect (seen in `pnpm chaos` when a
 * worker stopped past its session resumed: `offset: 4 is out of buffer range` from
 * `Record.deserialize` while connecting), and a throw there is an uncaught exception that ends
 * the process. Instead the unread bytes are dropped and the socket destroyed, which the library
 * handles like any lost connection (it reconnects; the session decides the rest). Must be
 * called before the client's first `connect()`; `onParseError` (optional) hears of each one.
 */
export function guardSocketData(
  client: ZooKeeperClient,
  onParseError?: (error: Error) => void,
): void {
  const manager = managerOf(client);
  if (!manager) return;
  const onSocketData = manager.onSocketData;
  // Bound per socket when the library connects (and called again for the rest of a buffer).
  manager.onSocketData = function (this: ConnectionManagerLike, buffer: Buffer): void {
    try {
      onSocketData.call(this, buffer);
    } catch (error) {
      this.pendingBuffer = null;
      this.socket?.destroy();
      onParseError?.(error instanceof Error ? error : new Error(String(error)));
    }
  };
}

/**
 * Keeps the process alive through the client's socket (`true`), or not (`false`): an idle
 * provider must not hold the event loop open. Applies to the current socket only; the
 * library opens a new (referenced) one on every reconnect.
 */
export function refSocket(client: ZooKeeperClient, ref: boolean): void {
  const socket = managerOf(client)?.socket;
  if (ref) socket?.ref();
  else socket?.unref();
}

/**
 * The library stops its connect timer once TCP connects, so a server that accepts the
 * connection but never answers the handshake (one still starting or shutting down) leaves
 * the client connecting forever. Every `periodMs` until `done()`, a socket that has been
 * there a whole period without the client getting connected is destroyed, which makes the
 * client try again. `onTimer` receives each timer (so the caller can clear it).
 */
export function unstickHandshake(
  client: ZooKeeperClient,
  periodMs: number,
  done: () => boolean,
  onTimer: (timer: NodeJS.Timeout) => void,
): NodeJS.Timeout | undefined {
  const manager = managerOf(client);
  if (!manager) return undefined;
  let previous = manager.socket;
  const arm = (): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      if (done()) return;
      const socket = manager.socket;
      if (socket && socket === previous) socket.destroy();
      previous = manager.socket;
      onTimer(arm());
    }, periodMs);
    timer.unref();
    return timer;
  };
  return arm();
}

/**
 * Closes a client lockkit owns and waits until it is closed for good. A connected client is
 * asked to close its session (the server then deletes its ephemeral nodes at once) and gets
 * `graceMs` for the answer. After that, or at once when it is not connected, the client is
 * stopped without the server: its reconnect loop is cut (the library would otherwise retry
 * forever), its connect timer cleared and its socket destroyed.
 */
export async function shutdownClient(client: ZooKeeperClient, graceMs: number): Promise<void> {
  const manager = managerOf(client);
  if (!manager) {
    client.close();
    return;
  }
  if (manager.state === ZkManagerState.CLOSED) return;
  let onState: ((state: number) => void) | undefined;
  const closed = new Promise<void>((resolve) => {
    onState = (state: number): void => {
      if (state === ZkManagerState.CLOSED) resolve();
    };
    manager.on('state', onState);
  });
  const settle = (ms: number): Promise<boolean> =>
    Promise.race([closed.then(() => true), delay(ms).then(() => false)]);
  try {
    if (manager.state === ZkManagerState.CONNECTED && graceMs > 0) {
      try {
        client.close();
      } catch {
        // nothing to send on: stopped below
      }
      if (await settle(graceMs)) return;
    }
    stopForGood(manager);
    // A reconnect already scheduled (the random spin delay) still opens one socket, which
    // the patched handlers end at once.
    if (await settle((manager.spinDelay ?? 0) + 50)) return;
    stopForGood(manager);
    await settle(1000);
  } finally {
    if (onState) manager.removeListener('state', onState);
  }
}

/** Ends the client without the server: no reconnect, no connect timer, no socket. */
function stopForGood(manager: ConnectionManagerLike): void {
  const end = function (this: ConnectionManagerLike): void {
    this.setState(ZkManagerState.CLOSED);
  };
  manager.connect = end; // where the library reconnects after a socket closed
  manager.onSocketConnected = function (this: ConnectionManagerLike): void {
    if (this.connectTimeoutHandler) clearTimeout(this.connectTimeoutHandler);
    this.socket?.destroy();
  };
  if (manager.connectTimeoutHandler) clearTimeout(manager.connectTimeoutHandler);
  if (manager.state !== ZkManagerState.CLOSED) manager.setState(ZkManagerState.CLOSING);
  if (manager.socket) manager.socket.destroy();
  else manager.setState(ZkManagerState.CLOSED);
}
