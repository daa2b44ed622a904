import { channel } from 'node:diagnostics_channel';
import type { LockHandle, LockKind } from './types.js';

/**
 * `node:diagnostics_channel` channels. Subscribe with
 * `diagnostics_channel.subscribe('lockkit:acquire', listener)`; messages are plain objects
 * (see {@link LockEvent}). Nothing is published when nobody listens.
 */
export const channelNames = {
  /** A wait began (the first attempt did not succeed and the caller is willing to wait). */
  wait: 'lockkit:wait',
  /**
   * A lock was granted (`handle`; `waitedMs` since the acquire call, `waitStartMs` if it
   * waited), or a handed-over hold was resumed (`waitedMs` since the `resume()` call).
   */
  acquire: 'lockkit:acquire',
  /** An acquire gave up (`outcome`: 'timeout' | 'aborted' | 'error'; `waitedMs`, `waitStartMs`). */
  acquireFailed: 'lockkit:acquire-failed',
  /** A handle was released (`stillHeld` as returned to the caller), or exported (`false`). */
  release: 'lockkit:release',
  /** A lease extension finished (`ok`). */
  extend: 'lockkit:extend',
  /** A handle's signal aborted with LockLostError (`error`; `reason`: see {@link LockLostReason}). */
  lost: 'lockkit:lost',
} as const;

/**
 * Why a hold was lost (`lockkit:lost`): `expired` — the lease ran out before an extension
 * succeeded (extensions failed, or the process stalled past the lease); `revoked` — the
 * backend says the hold is gone (an extension found it taken or deleted, the session or
 * connection ended, the node or lock file was removed); `release-failed` — `release()` could
 * not reach the backend, so the hold must be assumed lost.
 */
export type LockLostReason = 'expired' | 'revoked' | 'release-failed';

/** The message published on every lockkit channel. */
export interface LockEvent {
  /** Backend id of the provider (`provider.backend`). */
  readonly backend: string;
  /** The lock name as the provider saw it (with a `withNamePrefix` prefix). */
  readonly name: string;
  readonly kind: LockKind;
  /**
   * The handle the event is about, on `acquire`, `release`, `extend` and `lost`: the same
   * object from the grant to the release, so a subscriber can keep per-hold state keyed on
   * it. Absent on a `release` of a grant nobody received (it arrived after the caller gave up).
   */
  readonly handle?: LockHandle;
  readonly fencingToken?: bigint;
  /**
   * On `acquire` and `acquire-failed`: milliseconds from the acquire call to the grant, or
   * to giving up.
   */
  readonly waitedMs?: number;
  /**
   * On `acquire` and `acquire-failed`: milliseconds from the acquire call to the start of its
   * wait (when `lockkit:wait` was published); absent when the call never waited.
   */
  readonly waitStartMs?: number;
  readonly outcome?: 'timeout' | 'aborted' | 'error';
  /** On `lost`: why (see {@link LockLostReason}). */
  readonly reason?: LockLostReason;
  readonly stillHeld?: boolean;
  readonly ok?: boolean;
  readonly error?: unknown;
}

/** A {@link LockEvent} being built (core's publishers fill it in; not exported from the package). */
export type LockEventDraft = { -readonly [K in keyof LockEvent]: LockEvent[K] };

const channels = {
  wait: channel(channelNames.wait),
  acquire: channel(channelNames.acquire),
  acquireFailed: channel(channelNames.acquireFailed),
  release: channel(channelNames.release),
  extend: channel(channelNames.extend),
  lost: channel(channelNames.lost),
};

/** Publishes the event `build()` returns on channel `which`, building it only if anyone listens. */
export function publish(which: keyof typeof channelNames, build: () => LockEvent): void {
  const target = channels[which];
  if (target.hasSubscribers) target.publish(build());
}
