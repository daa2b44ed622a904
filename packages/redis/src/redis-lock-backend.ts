import { randomUUID } from 'node:crypto';
import {
  BackendUnavailableError,
  type Capabilities,
  type Grant,
  type LeaseInfo,
  type LockBackend,
  type LockRequest,
  now,
  type ReleaseWatch,
  untilAborted,
  type WaitContext,
} from '@lockkit/core';
import { type RedisLockKeys, redisLockKeys } from './redis-keys.js';
import {
  acquireCall,
  extendCall,
  releaseCall,
  unregisterCall,
  type WaiterRegistration,
  type WriterMarker,
  wakesOneProvider,
  withdrawCall,
} from './redis-lock-calls.js';
import type { ResolvedRedisOptions } from './redis-lock-options.js';
import type { RedisNode } from './redis-node.js';
import { RedisNodeSet, type Votes } from './redis-node-set.js';
import { clockDriftMs, semaphoreQuorumOf } from './redlock-quorum.js';
import { ReleaseSubscriber } from './release-subscriber.js';
import { WaiterWakeup } from './release-watch.js';

/** A Redis grant: the holder's random token on every node, and its lease. */
export interface RedisGrant extends Grant {
  readonly fencingToken: bigint;
  readonly lease: LeaseInfo;
  /** Random per attempt: identifies this hold on every node. */
  readonly token: string;
  /** Redlock: the token as a decimal string, raised on every node by extend/release ('' on one node). */
  readonly fenceFloor: string;
}

const noMarker: WriterMarker = { waiterId: '', markerMs: 0 };
const noRegistration: WaiterRegistration = { providerId: '', registerMs: 0, last: false };
const isGrant = (reply: unknown): boolean => typeof reply === 'string';
const isYes = (reply: unknown): boolean => reply === 1;
/** The extend script ran (1: extended, 0: not ours there) — either way it raised the fence. */
const ran = (reply: unknown): boolean => reply === 1 || reply === 0;

/**
 * The Redis {@link LockBackend}: single node (N = 1) or Redlock over N independent nodes.
 * One attempt = the kind's acquire script on every node at once; granted when a quorum
 * granted within the lease's validity (TTL − elapsed − drift). Waiting is core's: this backend
 * supplies a pub/sub watch, and wakes it early when the blocking lease is due to run out.
 */
export class RedisLockBackend implements LockBackend<RedisGrant> {
  readonly backend = 'redis';
  readonly capabilities: Capabilities;
  readonly pollIntervalMs: number;
  readonly #options: ResolvedRedisOptions;
  readonly #nodes: RedisNodeSet;
  readonly #subscribers: readonly ReleaseSubscriber[];
  readonly #keyCache = new Map<string, RedisLockKeys>();
  readonly #waiters = new WeakMap<LockRequest, WaiterWakeup>();
  readonly #writerIds = new WeakMap<AbortSignal, string>();
  /** This provider's id in waiters sets and release messages. */
  readonly #providerId = randomUUID();
  /** How long a waiter registration or writer marker lasts without a refresh by a retry. */
  readonly #registrationMs: number;

  constructor(options: ResolvedRedisOptions) {
    this.#options = options;
    this.#nodes = new RedisNodeSet(options.nodes, options.commandTimeoutMs);
    this.#subscribers = this.#nodes.nodes.map(
      (node) => new ReleaseSubscriber(node.client, this.#providerId, options.pollIntervalMs),
    );
    this.pollIntervalMs = options.pollIntervalMs;
    this.#registrationMs = Math.ceil(options.pollIntervalMs * 2.5 + options.commandTimeoutMs);
    const boundMs = options.leaseMs + options.commandTimeoutMs + 250;
    this.capabilities = Object.freeze({
      crossProcess: true,
      leases: true,
      fifo: false,
      lostDetectionMs: boundMs,
      abandonedReleaseMs: boundMs,
    });
  }

  /** The nodes (one per configured node, in order). */
  get nodes(): readonly RedisNode[] {
    return this.#nodes.nodes;
  }

  /** The keys of a request (cached: hashing the name is the costliest local step). */
  keysOf(request: LockRequest): RedisLockKeys {
    const family = request.kind === 'write' ? 'read' : request.kind;
    const id = `${family}\0${request.namespace}\0${request.name}`;
    let keys = this.#keyCache.get(id);
    if (!keys) {
      if (this.#keyCache.size >= 1000) this.#keyCache.clear();
      keys = redisLockKeys(request.namespace, request.kind, request.name);
      this.#keyCache.set(id, keys);
    }
    return keys;
  }

  async tryAcquire(request: LockRequest, wait: WaitContext): Promise<RedisGrant | null> {
    const { leaseMs } = this.#options;
    const keys = this.keysOf(request);
    const token = randomUUID();
    const marker = request.kind === 'write' ? this.#writerMarker(keys, wait) : noMarker;
    const call = acquireCall(request, keys, token, leaseMs, marker, this.#registration(request));
    const quorum = this.#quorumOf(request);
    const started = now();
    const votes = await untilAborted(
      this.#nodes.vote(quorum, () => call, isGrant),
      wait.signal,
    );
    if (votes === undefined) {
      // The caller gave up mid-attempt: cancel on every node now (the cancel runs after the
      // attempt on each connection, so a grant is released and a late one is refused).
      this.#undo(request, keys, token, []);
      return null;
    }
    const validUntil = started + leaseMs - clockDriftMs(leaseMs);
    let fencingToken = 0n;
    let granted = 0;
    let busy = 0;
    let hintMs = Number.POSITIVE_INFINITY;
    for (const vote of votes) {
      if (!vote?.ok) continue;
      if (typeof vote.value === 'string') {
        granted += 1;
        const value = BigInt(vote.value);
        if (value > fencingToken) fencingToken = value;
      } else if (typeof vote.value === 'number') {
        busy += 1;
        if (vote.value >= 0) hintMs = Math.min(hintMs, vote.value);
      }
    }
    if (granted >= quorum && now() < validUntil) {
      const waiter = this.#waiters.get(request);
      if (waiter) waiter.granted = true;
      if (marker.markerMs > 0 && this.#nodes.size > 1) {
        // Our marker may linger on nodes that did not grant: take it away there.
        this.#nodes.everywhere(
          (node) => withdrawCall(keys, marker.waiterId, this.#channelOf(node, keys)),
          (index) => isGrantVote(votes[index]),
        );
      }
      const fenceFloor = this.#nodes.size > 1 ? String(fencingToken) : '';
      if (this.#nodes.size > 1) {
        // Lift the fence to our token on a quorum BEFORE handing the token out. Any later
        // quorum overlaps this one, so the next grant counts past us even if this holder
        // vanishes before it ever extends or releases (found by the chaos run: after a
        // minority restarted empty, tokens repeated or went back).
        const raise = extendCall(request, keys, token, leaseMs, fenceFloor);
        const raised = await this.#nodes.vote(quorum, () => raise, ran);
        const lifted = raised.filter((vote) => vote?.ok === true && ran(vote.value)).length;
        if (lifted < quorum || now() >= validUntil) {
          this.#undo(request, keys, token, votes);
          throw this.#nodes.unavailable(request.name, 'acquire', raised);
        }
      }
      const lease = { durationMs: leaseMs, validUntil, autoExtend: this.#options.autoExtend };
      return { fencingToken, lease, token, fenceFloor };
    }
    // Not granted: undo every node that granted or may have (a reply that timed out can
    // still run on the server; the release leaves a cancel marker that refuses it then).
    this.#undo(request, keys, token, votes);
    if (granted >= quorum || busy > this.#nodes.size - quorum) {
      if (hintMs < Number.POSITIVE_INFINITY) this.#waiters.get(request)?.wakeAfter(hintMs);
      return null;
    }
    throw this.#nodes.unavailable(request.name, 'acquire', votes);
  }

  async watch(request: LockRequest): Promise<ReleaseWatch> {
    const keys = this.keysOf(request);
    const waiter = new WaiterWakeup();
    const listener = (): void => waiter.wakeup.notify();
    const channels = this.#nodes.nodes.map((node) => this.#channelOf(node, keys));
    // A release frees one exclusive slot: wake one exclusive waiter here, and all readers.
    const shared = request.kind === 'read';
    const timeoutMs = this.#options.commandTimeoutMs;
    this.#waiters.set(request, waiter);
    await Promise.all(
      this.#subscribers.map((subscriber, index) =>
        subscriber.add(channels[index] as string, listener, timeoutMs, shared),
      ),
    );
    return {
      next: (signal) => waiter.wakeup.next(signal),
      close: () => {
        waiter.clear();
        if (this.#waiters.get(request) === waiter) this.#waiters.delete(request);
        let emptied = false;
        this.#subscribers.forEach((subscriber, index) => {
          emptied = subscriber.remove(channels[index] as string, listener, !waiter.granted);
        });
        if (emptied && !waiter.granted && wakesOneProvider(request)) {
          // Our last waiter left without the lock: leave the waiters set, and pass on a
          // wake-up we may have been sent.
          this.#nodes.everywhere(
            (node) => unregisterCall(keys, this.#providerId, this.#channelOf(node, keys), true),
            () => false,
          );
        }
      },
    };
  }

  async release(request: LockRequest, grant: RedisGrant): Promise<boolean> {
    const keys = this.keysOf(request);
    const quorum = this.#quorumOf(request);
    const votes = await this.#nodes.vote(
      quorum,
      (node) =>
        releaseCall(request, keys, grant.token, this.#channelOf(node, keys), 0, grant.fenceFloor),
      isYes,
    );
    const held = this.#nodes.verdict(quorum, votes);
    if (held === undefined) throw this.#nodes.unavailable(request.name, 'release', votes);
    return held;
  }

  async extend(request: LockRequest, grant: RedisGrant): Promise<number | false> {
    const { leaseMs } = this.#options;
    const keys = this.keysOf(request);
    const call = extendCall(request, keys, grant.token, leaseMs, grant.fenceFloor);
    const quorum = this.#quorumOf(request);
    const started = now();
    const votes = await this.#nodes.vote(quorum, () => call, isYes);
    const held = this.#nodes.verdict(quorum, votes);
    if (held === undefined) throw this.#nodes.unavailable(request.name, 'extend', votes);
    if (!held) return false;
    const validUntil = started + leaseMs - clockDriftMs(leaseMs);
    if (now() >= validUntil) {
      throw new BackendUnavailableError(`Extending "${request.name}" took longer than the lease`, {
        lockName: request.name,
      });
    }
    return validUntil;
  }

  /** Drops the subscribers and QUITs owned clients; commands already written still run. */
  close(): Promise<void> {
    for (const subscriber of this.#subscribers) subscriber.close();
    this.#nodes.close();
    return Promise.resolve();
  }

  /**
   * Mutex and semaphore: keep this provider in the lock's waiters set while a request of it
   * waits (registered by each refused retry), and take it out with the grant of its last one.
   * A first attempt (not waiting yet) leaves the set alone.
   */
  #registration(request: LockRequest): WaiterRegistration {
    if (!wakesOneProvider(request)) return noRegistration;
    const waiting = this.#waiters.has(request);
    const channel = this.#channelOf(this.#nodes.nodes[0] as RedisNode, this.keysOf(request));
    const others = (this.#subscribers[0]?.listenerCount(channel) ?? 0) - (waiting ? 1 : 0);
    return {
      providerId: this.#providerId,
      registerMs: waiting ? this.#registrationMs : 0,
      last: waiting && others <= 0,
    };
  }

  /** Nodes that must agree: a majority, or more for a semaphore (see semaphoreQuorumOf). */
  #quorumOf(request: LockRequest): number {
    return request.kind === 'semaphore'
      ? semaphoreQuorumOf(this.#nodes.size, request.maxCount)
      : this.#nodes.majority;
  }

  /** The release channel on a node: ioredis prefixes KEYS but not channels, so we do. */
  #channelOf(node: RedisNode, keys: RedisLockKeys): string {
    return node.keyPrefix + keys.channel;
  }

  /** Undoes an attempt on every node that granted it or may have (a busy node did not). */
  #undo(request: LockRequest, keys: RedisLockKeys, token: string, votes: Votes): void {
    this.#nodes.nodes.forEach((node, index) => {
      const vote = votes[index];
      if (vote?.ok && typeof vote.value === 'number') return;
      if (vote && !vote.ok && !(vote.error as { mayHaveRun?: boolean }).mayHaveRun) return;
      const { leaseMs } = this.#options;
      const channel = this.#channelOf(node, keys);
      const call = releaseCall(request, keys, token, channel, leaseMs, '');
      this.#nodes.persist(node, call, 2 * leaseMs);
    });
  }

  /**
   * A waiting writer's marker: one id per acquire call (its wait signal), kept alive by its
   * retries, as long as the wait may last; withdrawn when the wait is aborted.
   */
  #writerMarker(keys: RedisLockKeys, wait: WaitContext): WriterMarker {
    if (wait.deadline === Number.NEGATIVE_INFINITY) return noMarker;
    let waiterId = this.#writerIds.get(wait.signal);
    if (waiterId === undefined) {
      const id = randomUUID();
      waiterId = id;
      this.#writerIds.set(wait.signal, id);
      const withdraw = (): void =>
        this.#nodes.everywhere(
          (node) => withdrawCall(keys, id, this.#channelOf(node, keys)),
          () => false,
        );
      wait.signal.addEventListener('abort', withdraw, { once: true });
    }
    const markerMs = Math.ceil(Math.min(wait.deadline - now(), this.#registrationMs));
    return markerMs > 0 ? { waiterId, markerMs } : noMarker;
  }
}

function isGrantVote(vote: Votes[number]): boolean {
  return vote?.ok === true && typeof vote.value === 'string';
}
