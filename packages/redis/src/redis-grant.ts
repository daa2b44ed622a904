import type { Grant, LeaseInfo } from '@lockkit/core/backend';

/** A Redis grant: the holder's random token on every node, and its lease. */
export interface RedisGrant extends Grant {
  readonly fencingToken: bigint;
  readonly lease: LeaseInfo;
  /** Random per attempt: identifies this hold on every node. */
  readonly token: string;
  /** Redlock: the token as a decimal string, raised on every node by extend/release ('' on one node). */
  readonly fenceFloor: string;
}
