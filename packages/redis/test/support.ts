import { waitFor } from '@lockkit/conformance';
import type { LockHandle } from '@lockkit/core';
import { grantBehind } from '@lockkit/core/backend';
import { type Cluster, Redis } from 'ioredis';
import { type RedisGrant, redisLockKeys } from '../src/index.js';
import { redrawFence } from '../src/scripts/acquire-scripts.js';

/** Lease used by the tests: short, so lease cases are quick. */
export const testLeaseMs = 1000;

/** Multiplies every timing bound of these tests (LOCKKIT_TIME_SCALE, for slow machines). */
export const timeScale: number = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

/** A timing bound in ms, scaled by {@link timeScale}. */
export function scaled(ms: number): number {
  return ms * timeScale;
}

/**
 * Breaks a hold the way the real world would: someone deletes it on every node (the key of a
 * mutex or writer, the member of a reader or semaphore permit), without telling the handle.
 */
export async function deleteHold(handle: LockHandle, urls: readonly string[]): Promise<void> {
  await Promise.all(
    urls.map(async (url) => {
      const client = new Redis(url, { lazyConnect: true });
      try {
        await client.connect();
        await deleteHoldOn(handle, client);
      } finally {
        client.disconnect();
      }
    }),
  );
}

/** {@link deleteHold} through one client (a Cluster, or a client that finds the primary through Sentinel). */
export async function deleteHoldOn(handle: LockHandle, client: Redis | Cluster): Promise<void> {
  const { request, grant } = grantBehind<RedisGrant>(handle);
  const keys = redisLockKeys(request.namespace, request.kind, request.name);
  if (request.kind === 'mutex' || request.kind === 'write') await client.del(keys.lock);
  else if (request.kind === 'read') await client.zrem(keys.readers, grant.token);
  else await client.zrem(keys.lock, grant.token);
}

/** Polls `condition` until it holds; throws after `timeoutMs` (scaled). */
export function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  return waitFor(condition, scaled(timeoutMs), 'a condition');
}

type EvalSha = (sha: string, numKeys: number, ...rest: (string | number)[]) => Promise<unknown>;

/**
 * Runs `around` in place of a client's EVALSHA of the Redlock redraw script (every other
 * command runs as is): a test forces an interleaving at a redraw without timing. The script
 * must be loaded on the server first (a NOSCRIPT round would bypass it).
 */
export function onRedraw(
  client: Redis,
  around: (run: () => Promise<unknown>, fenceKey: string) => Promise<unknown>,
): void {
  const target = client as unknown as { evalsha: EvalSha };
  const original = target.evalsha.bind(client);
  target.evalsha = (sha, numKeys, ...rest) => {
    const run = (): Promise<unknown> => original(sha, numKeys, ...rest);
    return sha === redrawFence.sha ? around(run, String(rest[0])) : run();
  };
}
