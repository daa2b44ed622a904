import {
  BackendUnavailableError,
  type Capabilities,
  type Grant,
  type LockBackend,
  type LockKind,
  type LockRequest,
  now,
  readableKey,
  type WaitContext,
  Wakeup,
} from '@lockkit/core';
import { BackgroundWork } from './background-work.js';
import { ACQUIRED_MARKER, decide, nodePrefixes, queueOf } from './lock-recipes.js';
import { OwnNodeWatch } from './own-node-watch.js';
import { ParentReaper } from './parent-reaper.js';
import { createProtected, removeNode } from './protected-create.js';
import { SessionSupervisor } from './session-supervisor.js';
import { observedWatcher } from './watch-events.js';
import type { ZkSession } from './zk-session.js';
import { ZkCode, type ZooKeeperAcl, zkCode, zookeeperModule } from './zookeeper-client.js';
import type { ResolvedZooKeeperOptions } from './zookeeper-options.js';

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
    this.capabilities = {
      crossProcess: true,
      leases: false,
      fifo: true,
      // Node deleted: one round trip. Session gone: the heartbeat's deadline, i.e. at most
      // the session timeout after the last reply, plus timer and scheduling slack.
      lostDetectionMs: options.sessionTimeoutMs + 1000,
      // The server expires a dead holder's session within the session timeout plus one
      // tickTime (≤ 2 s by default); the next waiter's watch then fires.
      abandonedReleaseMs: options.sessionTimeoutMs + 3000,
    };
  }

  /** The lock's parent node: `<basePath>/<family>.<readable name>.<hash>`. */
  parentOf(request: LockRequest): string {
    return lockParentPath(this.#options.basePath, request.namespace, request.kind, request.name);
  }

  tryAcquire(request: LockRequest, wait: WaitContext): Promise<ZooKeeperGrant | null> {
    const attempt = this.#acquire(request, wait);
    this.#inflight.add(attempt);
    void attempt.finally(() => this.#inflight.delete(attempt)).catch(() => undefined);
    return attempt;
  }

  async release(_request: LockRequest, grant: ZooKeeperGrant): Promise<boolean> {
    grant.watch.detach();
    const { session } = grant;
    if (session.lost && session.owned) return false; // the node ended with the session
    try {
      const removing = session.remove(grant.path);
      // Sent after our delete; with a delay of 0 the release also waits for it.
      const tidying = this.#reaper.schedule(grant.parent);
      const removed = await removing;
      await tidying;
      return removed;
    } catch (error) {
      if (session.lost && session.owned) return false;
      this.#background.run(() => removeNode(session, grant.path, this.#background));
      throw unavailable('release', error);
    }
  }

  monitor(
    _request: LockRequest,
    grant: ZooKeeperGrant,
    lose: (reason: string, cause?: unknown) => void,
  ): () => void {
    const stopSession = grant.session.onLost(lose);
    grant.watch.attach(lose);
    return () => {
      stopSession();
      grant.watch.detach();
    };
  }

  async close(): Promise<void> {
    // Core aborted every wait; each attempt deletes its node before it settles.
    while (this.#inflight.size > 0) await Promise.allSettled(this.#inflight);
    await this.#background.drain(this.#options.operationTimeoutMs);
    await this.#reaper.flush();
    await this.sessions.close();
  }

  async #acquire(request: LockRequest, wait: WaitContext): Promise<ZooKeeperGrant | null> {
    for (let round = 1; ; round++) {
      if (wait.signal.aborted) return null;
      let session: ZkSession;
      try {
        session = this.sessions.current();
      } catch (error) {
        throw unavailable('acquire', error);
      }
      try {
        return await this.#acquireOn(session, request, wait);
      } catch (error) {
        if (wait.signal.aborted) return null;
        const sessionEnded = error instanceof SessionGone || session.lost !== undefined;
        const retry = sessionEnded && round < 3 && now() < wait.deadline;
        if (!retry)
          throw unavailable('acquire', error instanceof SessionGone ? error.cause : error);
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
    const creating = createProtected({
      session,
      parent,
      prefix: nodePrefixes[request.kind],
      acl: this.#acl,
      ensureParent: () => this.#ensureParent(session, parent),
      background: this.#background,
    });
    // Pipelined behind the create (one session's requests run in order), so the first
    // listing costs no extra round trip. Unusable when the create had to be retried.
    let early: Promise<string[] | undefined> | undefined = session
      .getChildren(parent)
      .catch(() => undefined);
    const { path, czxid: fencingToken } = await creating.catch(async (error: unknown) => {
      await early;
      throw error;
    });
    const own = path.slice(parent.length + 1);
    const once = wait.deadline === Number.NEGATIVE_INFINITY;
    // Our node is watched from now on, for the whole wait and hold (sent, not awaited: the
    // grant does not wait for it, and a node already gone by then counts as deleted).
    const watch = new OwnNodeWatch(session, path);
    watch.start();
    let granted = false;
    try {
      for (;;) {
        if (session.lost) throw gone(session.lost.reason, session.lost.cause);
        const wake = new Wakeup();
        watch.attach(() => wake.notify()); // our node deleted while waiting: look again
        const listed = (await early) ?? (await session.getChildren(parent));
        const fromEarly = early !== undefined;
        early = undefined;
        let decision = decide(request.kind, request.maxCount, queueOf(listed), own);
        if (decision.action === 'missing' && fromEarly) continue; // the create was retried
        if (decision.action === 'watch-children' && !once && !wait.signal.aborted) {
          // The first semaphore waiter: list again WITH a watch, so no release between the
          // listing and the watch is missed (the plain listing above leaves no stale watch
          // behind in the common case, where the release already happened).
          const watcher = observedWatcher('children', () => wake.notify());
          const children = await session.getChildren(parent, watcher);
          decision = decide(request.kind, request.maxCount, queueOf(children), own);
        }
        if (decision.action === 'missing') throw gone('our lock node disappeared while waiting');
        if (decision.action === 'granted') {
          if (wait.signal.aborted) return null;
          if (request.kind === 'semaphore' && decision.successors > 0) {
            // Tell the waiter behind us (which may watch our node) that we moved up. Not
            // awaited: if it fails, that waiter still wakes when we release.
            session.setData(path, ACQUIRED_MARKER).catch(() => undefined);
          }
          watch.attach(undefined); // until monitor() routes a deletion to the lost signal
          granted = true;
          return { fencingToken, path, parent, session, watch };
        }
        if (once || wait.signal.aborted) return null;
        if (decision.action === 'watch-node') {
          const watched = `${parent}/${decision.node}`;
          const watcher = observedWatcher('predecessor', () => wake.notify());
          const data = await session.getData(watched, watcher);
          if (data === null) continue; // gone already: look again
          if (request.kind === 'semaphore' && data.equals(ACQUIRED_MARKER)) continue;
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
    try {
      const removing = session.remove(path);
      void this.#reaper.schedule(parent); // never rejects
      await removing;
    } catch {
      this.#background.run(() => removeNode(session, path, this.#background));
    }
  }

  async #ensureParent(session: ZkSession, parent: string): Promise<void> {
    const paths: string[] = [];
    if (!this.#options.assumePathExists && this.#options.basePath !== '/') {
      const parts = this.#options.basePath.split('/');
      for (let i = 2; i <= parts.length; i++) paths.push(parts.slice(0, i).join('/'));
    }
    paths.push(parent);
    for (const node of paths) {
      try {
        await session.create(node, this.#acl);
      } catch (error) {
        const code = zkCode(error);
        if (code === ZkCode.NODE_EXISTS) continue;
        if (code === ZkCode.NO_NODE && this.#options.assumePathExists) {
          throw new BackendUnavailableError(
            `the base path ${this.#options.basePath} does not exist (assumePathExists is set)`,
            { cause: error },
          );
        }
        throw error;
      }
    }
  }
}

/**
 * The parent node of a lock (name→key mapping version 1, pinned by tests):
 * `<basePath>/<family>.<readable part of the name>.<base32 SHA-256 of namespace, family, name>`.
 */
export function lockParentPath(
  basePath: string,
  namespace: string,
  kind: LockKind,
  name: string,
): string {
  const key = readableKey(namespace, kind, name, { maxLength: 200 });
  return basePath === '/' ? `/${key}` : `${basePath}/${key}`;
}

/** Waits for `wake`, the caller giving up, or the session ending — whichever comes first. */
async function waitForWake(wake: Wakeup, signal: AbortSignal, session: ZkSession): Promise<void> {
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

function gone(reason: string, cause?: unknown): SessionGone {
  return new SessionGone(reason, { cause: cause ?? new Error(reason) });
}

function unavailable(what: string, error: unknown): unknown {
  if (BackendUnavailableError.isInstance(error)) return error;
  const code = zkCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  return new BackendUnavailableError(
    `ZooKeeper ${what} failed: ${detail}${code === undefined ? '' : ` (code ${code})`}`,
    { cause: error },
  );
}
