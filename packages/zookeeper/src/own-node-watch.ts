import { observedWatcher } from './watch-events.js';
import type { ZkSession } from './zk-session.js';
import { ZkEvent, type ZooKeeperStat } from './zookeeper-client.js';

/**
 * An `exists` watch on our own node, armed right after the create (the same request reads
 * the node's `czxid`, the fencing token). While waiting, a deletion wakes the wait; while
 * holding, it aborts the handle's lost signal (an operator, another client, or the server
 * ending the session deleted it). A deletion with no listener attached is remembered for the
 * next one, so nothing between the grant and `monitor()` is missed.
 */
export class OwnNodeWatch {
  readonly #session: ZkSession;
  readonly #path: string;
  #lose: ((reason: string) => void) | undefined;
  #deleted = false;
  #done = false;
  readonly #watcher = observedWatcher('own-node', (event) => {
    if (this.#done) return;
    if (event.type === ZkEvent.DELETED) {
      this.#vanished();
      return;
    }
    // Data changed (someone wrote into our node): watches are one-shot, so re-arm.
    this.arm().then(
      (stat) => {
        if (!stat) this.#vanished();
      },
      () => {
        // A failed re-arm means the connection is in trouble; the session's own liveness
        // check reports that within the session timeout.
      },
    );
  });

  constructor(session: ZkSession, path: string) {
    this.#session = session;
    this.#path = path;
  }

  /** Sets the watch; resolves the node's stat (null: the node does not exist). */
  arm(): Promise<ZooKeeperStat | null> {
    return this.#session.exists(this.#path, this.#watcher);
  }

  /**
   * Sets the watch without waiting for the reply: a node already gone by then counts as
   * deleted; a failed request is the session's to detect (its liveness deadline).
   */
  start(): void {
    this.arm().then(
      (stat) => {
        if (!stat && !this.#done) this.#vanished();
      },
      () => undefined,
    );
  }

  /**
   * Routes a deletion to `listener` (at once, if it already happened); `undefined` keeps the
   * watch but only remembers a deletion for the next listener.
   */
  attach(listener: ((reason: string) => void) | undefined): void {
    if (this.#done) return;
    this.#lose = listener;
    if (this.#deleted && listener) {
      this.#lose = undefined;
      queueMicrotask(() => listener('the lock node was deleted'));
    }
  }

  /** Stops reporting (release or loss). The server-side watch ends with the node. */
  detach(): void {
    this.#done = true;
    this.#lose = undefined;
  }

  #vanished(): void {
    this.#deleted = true;
    const lose = this.#lose;
    this.#lose = undefined;
    lose?.('the lock node was deleted');
  }
}
