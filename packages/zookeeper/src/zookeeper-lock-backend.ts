import type { Capabilities } from '@lockkit/core';
import {
  type BackendLockState,
  type Grant,
  type LockBackend,
  type LockRequest,
  now,
  type WaitContext,
  Wakeup,
} from '@lockkit/core/backend';
import { AheadWatches } from './ahead-watches.js';
import { BackgroundWork, within } from './background-work.js';
import { breakQueue, holdRecord, inspectQueue } from './lock-admin.js';
import { ensureParent, lockParentPath, unavailable } from './lock-nodes.js';
import { type Decision, decide, nodePrefixOf, queueOf } from './lock-recipes.js';
import { OwnNodeWatch } from './own-node-watch.js';
import { ParentReaper } from './parent-reaper.js';
import { createProtected, removeNode } from './protected-create.js';
import { SessionSupervisor } from './session-supervisor.js';
import { waitForWake } from './watch-events.js';
import type { ZkSession } from './zk-session.js';
import { type ZooKeeperAcl, zookeeperModule } from './zookeeper-client.js';
import { type ResolvedZooKeeperOptions, zookeeperCapabilities } from './zookeeper-options.js';

/** A ZooKeeper grant: our ephemeral-sequential node and the session that owns it. */
export interface ZooKeeperGrant extends Grant {
  /** Full path of our lock node. */
  readonly path: string;
  /** The lock's parent node (removed when it is empty after release). */
  readonly parent: string;
  readonly session: ZkSession;
  readonly watch: OwnNodeWatch;
}

/** Thrown inside an acquire when its session (or its node) went away: start over. */
class SessionGone extends Error {}

/**
 * The ZooKeeper {@link LockBackend}: Curator-style queue recipes (see lock-recipes.ts) on
 * ephemeral-sequential nodes. `tryAcquire` creates our node and waits in the queue (a watch
 * on the one node ahead that matters) until granted, the deadline, or abort, and deletes the
 * node when it gives up. The fencing token is the node's `czxid`.
 */
export class ZooKeeperLockBackend implements LockBackend<ZooKeeperGrant> {
  readonly backend = 'zookeeper';
  readonly capabilities: Capabilities;
  /** Unused by core here: every wait is a server-side queue position. */
  readonly pollIntervalMs = 1000;
  readonly sessions: SessionSupervisor;
  readonly #options: ResolvedZooKeeperOptions;
  readonly #acl: ZooKeeperAcl[];
  readonly #background = new BackgroundWork();
  readonly #inflight = new Set<Promise<unknown>>();
  readonly #reaper: ParentReaper;
  /** Ends the "in use" mark of each grant (see SessionSupervisor.use). */
  readonly #holds = new WeakMap<ZooKeeperGrant, () => void>();

  constructor(options: ResolvedZooKeeperOptions) {
    this.#options = options;
    this.#acl = options.acl ? [...options.acl] : zookeeperModule().ACL.OPEN_ACL_UNSAFE;
    this.sessions = new SessionSupervisor({
      connectionString: options.connectionString,
      client: options.client,
      auth: options.auth,
      timing: options,
      spinDelayMs: options.spinDelayMs,
    });
    this.#reaper = new ParentReaper(options.parentCleanupDelayMs, () => this.sessions.peek());
    this.capabilities = zookeeperCapabilities(options);
  }

  /** The lock's parent node: `<basePath>/<family>.<readable name>.<hash>`. */
  parentOf(request: LockRequest): string {
    return lockParentPath(this.#options.basePath, request.namespace, request.kind, request.name);
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<ZooKeeperGrant | null> {
    const done = this.sessions.use();
    const attempt = this.#acquire(request, wait);
    this.#inflight.add(attempt);
    void attempt
      .then((grant) => {
        if (grant) this.#holds.set(grant, this.sessions.use());
      })
      .finally(() => {
        done();
        this.#inflight.delete(attempt);
      })
      .catch(() => undefined);
    return attempt;
  }

  async release(_request: LockRequest, grant: ZooKeeperGrant): Promise<boolean> {
    grant.watch.detach();
    const { session } = grant;
    const held = this.#holds.get(grant); // gone once lost: the session may be retiring
    if (!held || (session.lost && session.owned)) {
      held?.();
      return false;
    }
    try {
      const removing = session.remove(grant.path);
      // Sent after our delete; with a delay of 0 the release also waits for it.
      const tidying = this.#reaper.schedule(grant.parent);
      return (await Promise.all([removing, tidying]))[0];
    } catch (error) {
      // Thrown even if the session ended meanwhile: core reports the loss through the signal.
      if (!session.lost) {
        this.#background.run(() => removeNode(session, grant.path, this.#background));
      }
      throw unavailable('release', error, session.address);
    } finally {
      held?.();
    }
  }

  inspect(request: LockRequest): Promise<BackendLockState> {
    return inspectQueue(this.sessions, this.parentOf(request), request);
  }

  forceRelease(request: LockRequest): Promise<number> {
    return breakQueue(this.sessions, this.parentOf(request), request);
  }

  monitor(
    _request: LockRequest,
    grant: ZooKeeperGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    const lost = (reason: string, cause?: unknown): void => {
      this.#holds.get(grant)?.(); // nothing is held any more
      this.#holds.delete(grant);
      lose(reason, cause);
    };
    const stopSession = grant.session.onLost(lost);
    grant.watch.attach(lost);
    return () => {
      stopSession();
      grant.watch.detach();
    };
  }

  /**
   * Within the operation timeout: a server that answers gets the clean-up (attempts delete
   * their nodes, empty parents removed, session closed); one that does not is left alone
   * (its ephemeral nodes end with the session on the server).
   */
  async close(): Promise<void> {
    const closing = this.sessions.use(); // keep the process alive until close() is done
    try {
      await this.#close();
    } finally {
      closing();
    }
  }

  async #close(): Promise<void> {
    const deadline = now() + this.#options.operationTimeoutMs;
    const left = (): number => Math.max(0, deadline - now());
    if (this.sessions.peek()?.responsive) {
      // Core aborted every wait; each attempt deletes its node before it settles.
      await within(left(), async () => {
        while (this.#inflight.size > 0) await Promise.allSettled(this.#inflight);
        await this.#reaper.flush();
      });
    }
    this.#reaper.cancel();
    const background = this.#background.drain(left());
    await this.sessions.close(left());
    await background;
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<ZooKeeperGrant | null> {
    for (let round = 1; ; round++) {
      if (wait.signal.aborted) return null;
      let session: ZkSession;
      try {
        session = this.sessions.current();
      } catch (error) {
        throw unavailable('acquire', error, this.sessions.address);
      }
      try {
        return await this.#acquireOn(session, request, wait);
      } catch (error) {
        if (wait.signal.aborted) return null;
        const sessionEnded = error instanceof SessionGone || session.lost !== undefined;
        const retry = sessionEnded && round < 3 && now() < wait.deadline;
        if (!retry) {
          const cause = error instanceof SessionGone ? error.cause : error;
          throw unavailable('acquire', cause, session.address);
        }
      }
    }
  }

  async #acquireOn(
    session: ZkSession,
    request: LockRequest,
    wait: WaitContext,
  ): Promise<ZooKeeperGrant | null> {
    const parent = this.parentOf(request);
    this.#reaper.keep(parent);
    const since = Date.now();
    const creating = createProtected({
      session,
      parent,
      prefix: nodePrefixOf(request.kind, request.permits),
      data: holdRecord(request.owner, since),
      acl: this.#acl,
      ensureParent: () => ensureParent(session, parent, this.#options, this.#acl),
      background: this.#background,
    });
    // The first listing is pipelined behind the create (one session's requests run in order)
    // and sets the child watch that covers our node if granted at once (OwnNodeWatch).
    const watch = new OwnNodeWatch(session);
    let early: Promise<string[] | undefined> | undefined = session
      .getChildren(parent, watch.parentWatcher)
      .catch(() => undefined);
    const { path, czxid: fencingToken } = await creating.catch(async (error: unknown) => {
      await early;
      throw error;
    });
    watch.track(path);
    const own = path.slice(parent.length + 1);
    const once = wait.deadline === Number.NEGATIVE_INFINITY;
    let granted = false;
    const wake = new Wakeup();
    watch.attach(() => wake.notify()); // our node deleted while waiting: look again
    const ahead = new AheadWatches(session, parent, wake);
    let known = false; // granted without a listing (see AheadWatches)
    try {
      for (;;) {
        if (session.lost) throw gone(session.lost.reason, session.lost.cause);
        const first = early && (await early);
        const listed = known ? [] : (first ?? (await session.getChildren(parent)));
        const fromEarly = early !== undefined;
        early = undefined;
        const queue = queueOf(listed);
        let decision: Decision = known
          ? { action: 'granted', successors: 0 }
          : decide(request.kind, request.maxCount, queue, own);
        const waits = decision.action !== 'granted' && !once; // else covered or given up
        if (fromEarly && (!first || decision.action === 'missing' || waits)) watch.start();
        if (decision.action === 'missing' && fromEarly) continue; // the create was retried
        if (decision.action === 'watch-children' && !once && !wait.signal.aborted) {
          const children = await ahead.listWatchingChildren();
          decision = decide(request.kind, request.maxCount, queueOf(children), own);
        }
        if (decision.action === 'missing') throw gone('our lock node disappeared while waiting');
        if (decision.action === 'granted') {
          if (wait.signal.aborted) return null;
          if (request.kind === 'semaphore' && decision.successors > 0) {
            // Tell the waiter behind us (which may watch our node) that we moved up. Not
            // awaited: if it fails, that waiter still wakes when we release.
            session.setData(path, holdRecord(request.owner, since, true)).catch(() => undefined);
          }
          watch.attach(undefined); // until monitor() routes a deletion to the lost signal
          granted = true;
          return { fencingToken, path, parent, session, watch };
        }
        if (once || wait.signal.aborted) return null;
        if (decision.action === 'watch-node') {
          const next = await ahead.waitBehind(decision.node, { request, queue, own, wait, watch });
          if (next === 'aborted') return null;
          known = next === 'granted';
          continue;
        }
        wait.waiting();
        await waitForWake(wake, wait.signal, session);
        if (wait.signal.aborted) return null;
      }
    } finally {
      if (!granted) {
        watch.detach();
        await this.#withdraw(session, path, parent);
      }
    }
  }

  /** Deletes our node after giving up (and the parent if that left it empty). */
  async #withdraw(session: ZkSession, path: string, parent: string): Promise<void> {
    if (session.lost && session.owned) return;
    if (!session.responsive) {
      // Do not hold the caller up on a server that does not answer: retry in the background.
      this.#background.run(() => removeNode(session, path, this.#background));
      return;
    }
    try {
      const removing = session.remove(path);
      void this.#reaper.schedule(parent); // never rejects
      await removing;
    } catch {
      this.#background.run(() => removeNode(session, path, this.#background));
    }
  }
}

function gone(reason: string, cause?: unknown): SessionGone {
  return new SessionGone(reason, { cause: cause ?? new Error(reason) });
}
