import { channel } from 'node:diagnostics_channel';
import type { Wakeup } from '@lockkit/core/backend';
import type { ZkSession } from './zk-session.js';
import type { ZooKeeperEvent } from './zookeeper-client.js';

/** `node:diagnostics_channel` channels of this package (in addition to core's `lockkit:*`). */
export const zookeeperChannelNames = {
  /**
   * A ZooKeeper watch set by lockkit fired. Message: {@link WatchNotification}. Count these
   * to see that a release wakes one waiter (predecessor watches), not all of them.
   */
  watch: 'lockkit:zookeeper:watch',
} as const;

/** What a watch was for. */
export type WatchPurpose = 'predecessor' | 'ahead' | 'children' | 'own-node';

/** The message published on {@link zookeeperChannelNames}.watch. */
export interface WatchNotification {
  readonly purpose: WatchPurpose;
  /** The watched path. */
  readonly path: string;
  /** ZooKeeper event type: 1 created, 2 deleted, 3 data changed, 4 children changed. */
  readonly type: number;
}

const watchChannel = channel(zookeeperChannelNames.watch);

/** Wraps a watcher so each notification is published before `handler` runs. */
export function observedWatcher(
  purpose: WatchPurpose,
  handler: (event: ZooKeeperEvent) => void,
): (event: ZooKeeperEvent) => void {
  return (event) => {
    if (watchChannel.hasSubscribers) {
      const message: WatchNotification = { purpose, path: event.path, type: event.type };
      watchChannel.publish(message);
    }
    handler(event);
  };
}

/** Waits for `wake`, the caller giving up, or the session ending — whichever comes first. */
export async function waitForWake(
  wake: Wakeup,
  signal: AbortSignal,
  session: ZkSession,
): Promise<void> {
  const local = new AbortController();
  const onAbort = (): void => local.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const stopLost = session.onLost(() => local.abort());
  try {
    await wake.next(local.signal);
  } catch {
    // aborted or session lost: the caller's loop checks which
  } finally {
    signal.removeEventListener('abort', onAbort);
    stopLost();
  }
}
