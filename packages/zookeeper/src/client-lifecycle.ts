/**
 * Workarounds for two gaps of node-zookeeper-client's connection handling, for clients
 * lockkit owns. Both reach into the library's `connectionManager` (1.1.x).
 *
 * @module
 */
import { delay } from '@lockkit/core';
import { ZkManagerState, type ZooKeeperClient } from './zookeeper-client.js';

interface ConnectionManagerLike {
  state: number;
  socket?: { destroy(): void } | undefined;
  on(event: 'state', listener: (state: number) => void): unknown;
  removeListener(event: 'state', listener: (state: number) => void): unknown;
}

function managerOf(client: ZooKeeperClient): ConnectionManagerLike | undefined {
  return (client as unknown as { connectionManager?: ConnectionManagerLike }).connectionManager;
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
 * Closes a client lockkit owns and waits until its socket is gone. `close()` alone can hang
 * (an unanswered CLOSE_SESSION on a black-holed connection) or throw (a client that never
 * connected), so after `timeoutMs` the socket is destroyed, which ends the client for good.
 */
export async function shutdownClient(client: ZooKeeperClient, timeoutMs: number): Promise<void> {
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
    client.close();
  } catch {
    // node-zookeeper-client throws when closed before its first socket exists.
  }
  try {
    if (await settle(timeoutMs)) return;
    manager.socket?.destroy();
    if (await settle(timeoutMs)) return;
    manager.socket?.destroy(); // a reconnect attempt that was already scheduled
    await settle(timeoutMs);
  } finally {
    if (onState) manager.removeListener('state', onState);
  }
}
