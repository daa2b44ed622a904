import type { LockRequest, WaitContext, Wakeup } from '@lockkit/core/backend';
import { markedGranted } from './lock-admin.js';
import { grantedWithout, type QueueNode } from './lock-recipes.js';
import type { OwnNodeWatch } from './own-node-watch.js';
import { observedWatcher, waitForWake } from './watch-events.js';
import type { ZkSession } from './zk-session.js';
import { ZkEvent } from './zookeeper-client.js';

/** What one listing told a waiting contender, and what it waits with. */
export interface WaitingContender {
  readonly request: LockRequest;
  /** The queue, from the contender's last listing. */
  readonly queue: readonly QueueNode[];
  /** The contender's node name. */
  readonly own: string;
  readonly wait: WaitContext;
  readonly watch: OwnNodeWatch;
}

/**
 * The watches one waiting contender keeps on the queue ahead of it, for one acquire; each
 * wakes `wake`. Each node is watched once, and by at most two contenders (the two right
 * behind it), so a release wakes O(1) waiters.
 *
 * - The **blocker** is the node the queue recipe says to wait behind.
 * - Nodes only ever join a queue behind the others. So when the blocker goes and the last
 *   listing showed it as the only obstacle, the contender is granted without listing again
 *   — if its own node is known to be there still ({@link OwnNodeWatch.isKnownAlive}).
 * - While the blocker is not the only obstacle, the node right **ahead** of it is watched.
 *   When that one goes, the contender lists again while the blocker (now, typically, the
 *   holder) holds, and learns that it is. So the listing leaves the hand-off's path.
 */
export class AheadWatches {
  readonly #session: ZkSession;
  readonly #parent: string;
  readonly #wake: Wakeup;
  #blocker: { readonly node: string; gone: boolean } | undefined;
  #ahead: string | undefined;

  constructor(session: ZkSession, parent: string, wake: Wakeup) {
    this.#session = session;
    this.#parent = parent;
    this.#wake = wake;
  }

  /**
   * Waits behind `node` until something changed: `granted` (see the class comment), `look`
   * (list the queue again), or `aborted`.
   */
  async waitBehind(
    node: string,
    { request, queue, own, wait, watch }: WaitingContender,
  ): Promise<'granted' | 'look' | 'aborted'> {
    const semaphore = request.kind === 'semaphore';
    if (!(await this.#watchBlocker(node, semaphore))) return 'look';
    const last = grantedWithout(request, queue, own, node);
    const before = queue[queue.findIndex((entry) => entry.name === node) - 1];
    if (!last && before && !semaphore) this.#watchAhead(before.name);
    const blocker = this.#blocker;
    if (!blocker?.gone) {
      wait.waiting();
      await waitForWake(this.#wake, wait.signal, this.#session);
      if (wait.signal.aborted) return 'aborted';
    }
    return blocker?.gone && last && watch.isKnownAlive() ? 'granted' : 'look';
  }

  /**
   * The first semaphore waiter lists the queue again WITH a child watch, so that no release
   * between the listing and the watch is missed (the plain first listing leaves no stale
   * watch behind in the common case, where the release already happened).
   */
  listWatchingChildren(): Promise<string[]> {
    const watcher = observedWatcher('children', () => this.#wake.notify());
    return this.#session.getChildren(this.#parent, watcher);
  }

  /**
   * Watches `node` as the blocker, unless its watch is set already. Resolves false when the
   * queue must be listed again at once: a semaphore holder ahead marked itself granted.
   */
  async #watchBlocker(node: string, semaphore: boolean): Promise<boolean> {
    if (this.#blocker?.node === node && !this.#blocker.gone) return true;
    const blocker = { node, gone: false };
    this.#blocker = blocker;
    const watcher = observedWatcher('predecessor', (event) => {
      if (event.type === ZkEvent.DELETED) blocker.gone = true;
      else if (this.#blocker === blocker) this.#blocker = undefined; // read it again
      this.#wake.notify();
    });
    const data = await this.#session.getData(`${this.#parent}/${node}`, watcher);
    if (data === null) blocker.gone = true;
    if (!semaphore || !data || !markedGranted(data)) return true;
    this.#blocker = undefined;
    return false;
  }

  /** Watches `node`, the one right ahead of the blocker (once; its reply is not awaited). */
  #watchAhead(node: string): void {
    if (this.#ahead === node) return;
    this.#ahead = node;
    const watcher = observedWatcher('ahead', () => {
      if (this.#ahead === node) this.#ahead = undefined;
      this.#wake.notify();
    });
    // Gone already, or no answer: list again now (a failed session is the loop's to notice).
    this.#session.exists(`${this.#parent}/${node}`, watcher).then(
      (stat) => stat || this.#wake.notify(),
      () => this.#wake.notify(),
    );
  }
}
