import type { Capabilities } from '@lockkit/core';
import type { ResolvedRedisOptions } from './redis-lock-options.js';

/** What a Redis provider declares, from its options (`ackTimeoutMs`: the WAIT per round, or 0). */
export function redisCapabilities(
  options: ResolvedRedisOptions,
  ackTimeoutMs: number,
): Capabilities {
  const boundMs = options.leaseMs + options.commandTimeoutMs + 250;
  return Object.freeze({
    crossProcess: true,
    // A hold is keys with our random owner id and a lease: a resumer moves it to its own id.
    handOver: true,
    leases: true,
    // A per-acquire lease must leave room for an extension: commandTimeoutMs <= lease / 3.
    minLeaseMs: Math.max(100, Math.ceil(3 * options.commandTimeoutMs)),
    weightedPermits: true, // n members per grant; a waiting weighted request reserves its turn
    // Holds carry an inspection record; a break is seen at the holder's next extension.
    inspection: true,
    fifo: false,
    lostDetectionMs: boundMs,
    abandonedReleaseMs: boundMs,
    // Every command, the wait for its connection included, is cut off at the command
    // timeout; a Redlock acquire sends the scripts, then, when the granting nodes' counters
    // disagree, redraws that share one more command timeout; each round may add a WAIT.
    unavailableMs:
      (options.nodes.length > 1 ? 2 : 1) * (options.commandTimeoutMs + ackTimeoutMs) + 250,
  });
}
