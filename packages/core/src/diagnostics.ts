import { channel } from 'node:diagnostics_channel';
import type { LockKind } from './types.js';

/**
 * `node:diagnostics_channel` channels. Subscribe with
 * `diagnostics_channel.subscribe('lockkit:acquire', listener)`; messages are plain objects
 * (see {@link LockEvent}). Nothing is published when nobody listens.
 */
export const channelNames = {
  /** A wait began (the first attempt did not succeed and the caller is willing to wait). */
  wait: 'lockkit:wait',
  /** A lock was granted (`waitedMs` since the acquire call). */
  acquire: 'lockkit:acquire',
  /** An acquire gave up (`outcome`: 'timeout' | 'aborted' | 'error'). */
  acquireFailed: 'lockkit:acquire-failed',
  /** A handle was released (`stillHeld` as returned to the caller). */
  release: 'lockkit:release',
  /** A lease extension finished (`ok`). */
  extend: 'lockkit:extend',
  /** A handle's signal aborted with LockLostError (`error`). */
  lost: 'lockkit:lost',
} as const;

/** The message published on every lockkit channel. */
export interface LockEvent {
  readonly backend: string;
  readonly name: string;
  readonly kind: LockKind;
  readonly fencingToken?: bigint;
  readonly waitedMs?: number;
  readonly outcome?: 'timeout' | 'aborted' | 'error';
  readonly stillHeld?: boolean;
  readonly ok?: boolean;
  readonly error?: unknown;
}

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
