import { observedWatcher } from './watch-events.js';
import type { ZkSession } from './zk-session.js';
import { ZkEvent, type ZooKeeperEvent, type ZooKeeperStat } from './zookeeper-client.js';

/**
 * Watches our own lock node. While waiting, a deletion wakes the wait; while holding, it
 * aborts the handle's lost signal (an operator, another client, or the server ending the
 * session deleted it). A deletion with no listener attached is remembered for the next one,
 * so nothing between the grant and `monitor()` is missed.
 *
 * For a lock granted at once the watch costs no request of its own: the first listing of the
 * parent, pipelined behind the create, carries {@link parentWatcher} (a child watch), and a
 * child watch fires when any child of the parent goes, ours included. Only when it fires
 * (someone joined or left the queue) is the `exists` watch on our node set — its reply says
 * whether the node is still there, so a deletion in between is not missed. A contender that
 * waits, or whose first listing is unusable, sets the `exists` watch at once ({@link start}).
 */
export class OwnNodeWatch {
  readonly #session: ZkSession;
  #path: string | undefined;
  #lose: ((reason: string) => void) | undefined;
  #deleted = false;
  #done = false;
  /** The `exists` watch was asked for (it then re-arms itself). */
  #armed = false;
  /** The parent's child watch fired before our node's path was known. */
  #parentFired = false;
  /** The session's connection count when the watch last confirmed our node (see isKnownAlive). */
  #aliveOn: number | undefined;
  /** Events seen so far: a reply to an `exists` sent before the last one confirms nothing. */
  #events = 0;
  readonly #watcher = observedWatcher('own-node', (event) => {
    this.#aliveOn = undefined;
    this.#events++;
    if (this.#done) return;
    if (event.type === ZkEvent.DELETED) {
      this.#vanished();
      return;
    }
    // Data changed (someone wrote into our node): watches are one-shot, so re-arm.
    this.#arm();
  });

  /** The watcher for the first listing of the parent (see the class comment). */
  readonly parentWatcher: (event: ZooKeeperEvent) => void = observedWatcher('own-node', () => {
    if (this.#done || this.#armed) return;
    if (this.#path === undefined) this.#parentFired = true;
    else this.start();
  });

  constructor(session: ZkSession) {
    this.#session = session;
  }

  /** Our node was created at `path` (its deletions are reported from now on). */
  track(path: string): void {
    this.#path = path;
    if (this.#parentFired) this.start();
  }

  /**
   * Sets the `exists` watch without waiting for the reply (once): a node already gone by then
   * counts as deleted; a failed request is the session's to detect (its liveness deadline).
   */
  start(): void {
    if (this.#armed || this.#done || this.#path === undefined) return;
    this.#armed = true;
    this.#arm();
  }

  /**
   * True when the `exists` watch is set on our node and has reported nothing since, on the
   * same connection. Then a deletion of our node, had it happened before some later watch
   * event of this session, would have been reported first (one connection delivers events
   * in the server's order), so on that later event our node is known to be there.
   */
  isKnownAlive(): boolean {
    return !this.#deleted && this.#aliveOn === this.#session.connections;
  }

  #arm(): void {
    const path = this.#path as string;
    const [connections, events] = [this.#session.connections, this.#events];
    this.#session.exists(path, this.#watcher).then(
      (stat: ZooKeeperStat | null) => {
        const current = connections === this.#session.connections && events === this.#events;
        if (stat && current) this.#aliveOn = connections;
        if (!stat && !this.#done) this.#vanished();
      },
      () => {
        // A failed request means the connection is in trouble; the session's own liveness
        // check reports that within the session timeout.
      },
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
