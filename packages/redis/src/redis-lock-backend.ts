import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, type Capabilities } from '@lockkit/core';
import {
  type BackendLockState,
  type LockBackend,
  type LockRequest,
  memoizeKeys,
  now,
  type ReleaseWatch,
  type WaitContext,
} from '@lockkit/core/backend';
import { agreeOnToken, contendedError } from './fence-agreement.js';
import { redisCapabilities } from './redis-capabilities.js';
import type { RedisGrant } from './redis-grant.js';
import { exportRedisGrant, type RedisResumeGrant, resumeRedisGrant } from './redis-hand-over.js';
import { breakNodes, inspectNodes } from './redis-inspection.js';
import { type RedisLockKeys, redisLockKeys } from './redis-keys.js';
import {
  acquireCall,
  extendCall,
  type ReleaseChannel,
  releaseCall,
  unregisterCall,
  type WaiterRegistration,
  wakesOneProvider,
  withdrawCall,
} from './redis-lock-calls.js';
import type { ResolvedRedisOptions } from './redis-lock-options.js';
import type { RedisNode } from './redis-node.js';
import { RedisNodeSet, type Votes } from './redis-node-set.js';
import { clockDriftMs, lockQuorumOf } from './redlock-quorum.js';
import { ReleaseSubscriber } from './release-subscriber.js';
import { isGrant, isGrantVote, isYes, refusalHintMs } from './script-replies.js';
import { WaiterWakeup } from './waiter-wakeup.js';
import { WaitMarkers } from './writer-markers.js';

export type { RedisGrant } from './redis-grant.js';

const noRegistration: WaiterRegistration = { providerId: '', registerMs: 0, last: false };

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
  readonly #waiters = new WeakMap<LockRequest, WaiterWakeup>();
  readonly #markers: WaitMarkers;
  /** Its id in waiters sets and release messages; '~': it has its own channel per lock. */
  readonly #providerId = `~${randomUUID()}`;
  /** How long a waiter registration or writer marker lasts without a refresh by a retry. */
  readonly #registrationMs: number;
  /** The registration of an attempt that is not waiting (yet): it leaves the waiters set alone. */
  readonly #notWaiting: WaiterRegistration;

  constructor(options: ResolvedRedisOptions) {
    this.#options = options;
    const { minReplicas, replicaTimeoutMs } = options;
    const ack =
      minReplicas > 0 ? { replicas: minReplicas, timeoutMs: replicaTimeoutMs } : undefined;
    this.#nodes = new RedisNodeSet(options.nodes, options.commandTimeoutMs, ack);
    this.#subscribers = this.#nodes.nodes.map(
      (node) => new ReleaseSubscriber(node.client, this.#providerId, options.pollIntervalMs),
    );
    this.pollIntervalMs = options.pollIntervalMs;
    this.#registrationMs = Math.ceil(options.pollIntervalMs * 2.5 + options.commandTimeoutMs);
    this.#notWaiting = { providerId: this.#providerId, registerMs: 0, last: false };
    this.#markers = new WaitMarkers(this.#registrationMs, (keys, key, waiterId) =>
      this.#withdraw(keys, key, waiterId, () => false),
    );
    this.capabilities = redisCapabilities(options, ack?.timeoutMs ?? 0);
  }

  // Hand-over (redis-hand-over.ts).
  readonly exportGrant: typeof exportRedisGrant = exportRedisGrant;
  readonly resumeGrant: RedisResumeGrant = (...args) =>
    resumeRedisGrant(this.#nodes, this.#options, this.keysOf, ...args);

  /** The nodes (one per configured node, in order). */
  get nodes(): readonly RedisNode[] {
    return this.#nodes.nodes;
  }

  /** The keys of a request (memoised: hashing the name is the costliest local step). */
  readonly keysOf: (request: LockRequest) => RedisLockKeys = memoizeKeys((request) =>
    redisLockKeys(request.namespace, request.kind, request.name),
  );

  async tryAcquire(request: LockRequest, wait: WaitContext): Promise<RedisGrant | null> {
    const leaseMs = request.leaseMs ?? this.#options.leaseMs;
    const keys = this.keysOf(request);
    const token = randomUUID();
    const marker = this.#markers.markerOf(request, keys, wait);
    const registration = this.#registration(request);
    const recordHold = this.#options.recordHolds;
    const attempt = { request, keys, token, leaseMs, marker, waiter: registration, recordHold };
    const call = (node: RedisNode) => acquireCall(attempt, this.#channelOf(node, keys));
    const quorum = this.#quorumOf(request);
    const started = now();
    // No race with wait.signal: an attempt the caller gave up on is still undone (core
    // releases a late grant; a failed or timed-out one is cancelled below).
    const votes = await this.#nodes.vote(quorum, call, isGrant, started);
    const validUntil = started + leaseMs - clockDriftMs(leaseMs);
    let fencingToken = 0n;
    let granted = 0;
    let busy = 0;
    let hintMs = Number.POSITIVE_INFINITY;
    for (const vote of votes) {
      if (!vote?.ok) continue;
      if (isGrant(vote.value)) {
        granted += 1;
        const value = BigInt(vote.value);
        if (value > fencingToken) fencingToken = value;
      } else if (typeof vote.value === 'number') {
        busy += 1;
        const hint = refusalHintMs(vote.value);
        if (hint >= 0) hintMs = Math.min(hintMs, hint);
      }
    }
    if (granted >= quorum && now() < validUntil) {
      if (marker.markerMs > 0 && this.#nodes.size > 1) {
        // Our marker or reservation may linger on nodes that did not grant: take it away there.
        const key = WaitMarkers.keyOf(request, keys);
        this.#withdraw(keys, key, marker.waiterId, (index) => isGrantVote(votes[index]));
      }
      if (this.#nodes.size > 1) {
        // The token is a value a quorum returned to THIS grant in one round (see
        // fence-agreement.ts): the largest counter alone repeats when two shared grants are
        // counted in opposite orders. In the steady state the acquire round already agrees.
        const agreement = await agreeOnToken(this.#nodes, attempt, quorum, votes, validUntil);
        if (!agreement.agreed) {
          this.#undo(request, keys, token, votes);
          // Our hold ran out on a quorum before its token was settled: not granted after all.
          if (agreement.why === 'lost') return null;
          if (agreement.why === 'contended') throw contendedError(request.name);
          // No quorum decided it: core's outage policy retries or fails the call.
          throw this.#nodes.unavailable(request.name, 'acquire', agreement.votes);
        }
        fencingToken = agreement.token;
      }
      const waiter = this.#waiters.get(request);
      if (waiter) waiter.granted = true;
      const fenceFloor = this.#nodes.size > 1 ? String(fencingToken) : '';
      const autoExtend = request.autoExtend ?? this.#options.autoExtend;
      const lease = { durationMs: leaseMs, validUntil, autoExtend };
      return { fencingToken, lease, token, fenceFloor };
    }
    // Not granted: undo every node that granted or may have (a reply that timed out can
    // still run on the server; the release leaves a cancel marker that refuses it then).
    this.#undo(request, keys, token, votes);
    if (granted >= quorum || busy > this.#nodes.size - quorum) {
      // Held: enough nodes said so that no quorum could have granted it.
      if (hintMs < Number.POSITIVE_INFINITY) this.#waiters.get(request)?.wakeAfter(hintMs);
      return null;
    }
    // No quorum decided it (one node: it did not answer): nodes failed, and not enough of the
    // others said "held" to call it refused. Core's outage policy retries or fails the call.
    throw this.#nodes.unavailable(request.name, 'acquire', votes);
  }

  async watch(request: LockRequest): Promise<ReleaseWatch> {
    const keys = this.keysOf(request);
    const waiter = new WaiterWakeup();
    const listener = (): void => waiter.wakeup.notify();
    const channels = this.#nodes.nodes.map((node) => this.#channelOf(node, keys).name);
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

  async extend(request: LockRequest, grant: RedisGrant, leaseMs: number): Promise<number | false> {
    const keys = this.keysOf(request);
    const call = extendCall(request, keys, grant.token, leaseMs, grant.fenceFloor);
    const quorum = this.#quorumOf(request);
    const started = now();
    const votes = await this.#nodes.vote(quorum, call, isYes, started);
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

  inspect(request: LockRequest): Promise<BackendLockState> {
    return inspectNodes(this.#nodes, request, this.keysOf(request), this.#quorumOf(request));
  }

  forceRelease(request: LockRequest): Promise<number> {
    const keys = this.keysOf(request);
    const channelOf = (node: RedisNode): ReleaseChannel => this.#channelOf(node, keys);
    return breakNodes(this.#nodes, request, keys, this.#quorumOf(request), channelOf);
  }

  /** Drops the subscribers and QUITs owned clients; commands already written still run. */
  close(): Promise<void> {
    for (const subscriber of this.#subscribers) subscriber.close();
    this.#nodes.close();
    return Promise.resolve();
  }

  /**
   * Mutex and semaphore: keep this provider in the lock's waiters set while a request of it
   * waits (each refused retry registers), out with its last one's grant; a first try does not.
   */
  #registration(request: LockRequest): WaiterRegistration {
    if (!wakesOneProvider(request)) return noRegistration;
    const waiting = this.#waiters.has(request);
    if (!waiting) return this.#notWaiting;
    const channel = this.#channelOf(this.#nodes.nodes[0] as RedisNode, this.keysOf(request));
    const others = (this.#subscribers[0]?.listenerCount(channel.name) ?? 0) - 1;
    return { providerId: this.#providerId, registerMs: this.#registrationMs, last: others <= 0 };
  }

  /** Takes a marker or reservation (in `key`) away on every node but the skipped ones. */
  #withdraw(
    keys: RedisLockKeys,
    key: string,
    waiterId: string,
    skip: (index: number) => boolean,
  ): void {
    this.#nodes.everywhere(
      (node) => withdrawCall(keys, key, waiterId, this.#channelOf(node, keys)),
      skip,
    );
  }

  /** Nodes that must agree: a majority, or more for a semaphore (see semaphoreQuorumOf). */
  #quorumOf(request: LockRequest): number {
    return lockQuorumOf(this.#nodes.size, request);
  }

  /** The release channel on a node: ioredis prefixes KEYS but not channels, so we do. */
  #channelOf(node: RedisNode, keys: RedisLockKeys): ReleaseChannel {
    return { name: node.keyPrefix + keys.channel, publish: node.sharded ? 'SPUBLISH' : 'PUBLISH' };
  }

  /** Undoes an attempt on every node that granted it or may have (a busy node did not). */
  #undo(request: LockRequest, keys: RedisLockKeys, token: string, votes: Votes): void {
    this.#nodes.nodes.forEach((node, index) => {
      const vote = votes[index];
      if (vote?.ok && !isGrant(vote.value)) return; // refused there: nothing to undo
      if (vote && !vote.ok && !(vote.error as { mayHaveRun?: boolean }).mayHaveRun) return;
      const leaseMs = request.leaseMs ?? this.#options.leaseMs;
      const channel = this.#channelOf(node, keys);
      const call = releaseCall(request, keys, token, channel, leaseMs, '');
      this.#nodes.persist(node, call, 2 * leaseMs);
    });
  }
}
