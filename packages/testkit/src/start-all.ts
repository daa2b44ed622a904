import type { ServerHandle } from './server-handle.js';

/**
 * Runs several starts in parallel. If any fails, the servers that did start are stopped and the
 * first failure is thrown, so a failed start leaves nothing running.
 */
export async function startAll<Handle extends ServerHandle>(
  starts: readonly (() => Promise<Handle>)[],
): Promise<Handle[]> {
  const results = await Promise.allSettled(starts.map((start) => start()));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure === undefined) {
    return results.map((result) => (result as PromiseFulfilledResult<Handle>).value);
  }
  await Promise.allSettled(
    results.map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)),
  );
  throw failure.reason;
}
