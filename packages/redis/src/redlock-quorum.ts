/**
 * Redlock voting: an operation is sent to every node at once and its outcome is decided as
 * soon as a majority agrees, so a paused or dead minority never delays it. With one node the
 * quorum is that node.
 */

/** One node's answer: its reply, or the error it failed with. */
export type Vote<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/** `floor(n / 2) + 1`: any two majorities share at least one node. */
export function quorumOf(nodeCount: number): number {
  return Math.floor(nodeCount / 2) + 1;
}

/**
 * Nodes a semaphore permit needs with `maxCount` = k on N nodes: `floor(N·k / (k + 1)) + 1`.
 * Each node admits at most k holders, so k + 1 holders need (k + 1)·q node slots of the N·k
 * there are; q above N·k / (k + 1) makes that impossible. k = 1 gives the majority; a large
 * k needs every node.
 */
export function semaphoreQuorumOf(nodeCount: number, maxCount: number): number {
  if (maxCount >= nodeCount) return nodeCount;
  return Math.min(nodeCount, Math.floor((nodeCount * maxCount) / (maxCount + 1)) + 1);
}

/** Nodes a request's grant needs: a majority, or a semaphore's permit quorum (above). */
export function lockQuorumOf(
  nodeCount: number,
  request: { readonly kind: string; readonly maxCount: number },
): number {
  return request.kind === 'semaphore'
    ? semaphoreQuorumOf(nodeCount, request.maxCount)
    : quorumOf(nodeCount);
}

/**
 * Redlock's allowance for clock drift between the nodes' TTL clocks and ours:
 * 1 % of the TTL plus 2 ms (the algorithm's published constants).
 */
export function clockDriftMs(ttlMs: number): number {
  return Math.round(ttlMs * 0.01) + 2;
}

/**
 * Waits for the votes of `attempts` until `decided(votes)` says the outcome is known or every
 * node has answered. `votes[i]` is undefined while node i has not answered. The attempts keep
 * running after this resolves; `settled` resolves once they all have.
 */
export function collectVotes<T>(
  attempts: readonly Promise<T>[],
  decided: (votes: readonly (Vote<T> | undefined)[]) => boolean,
): { readonly votes: Promise<readonly (Vote<T> | undefined)[]>; readonly settled: Promise<void> } {
  const votes: (Vote<T> | undefined)[] = attempts.map(() => undefined);
  let remaining = attempts.length;
  let resolveVotes: (snapshot: readonly (Vote<T> | undefined)[]) => void = () => {};
  const result = new Promise<readonly (Vote<T> | undefined)[]>((resolve) => {
    resolveVotes = resolve;
  });
  let done = false;
  const record = (index: number, vote: Vote<T>): void => {
    votes[index] = vote;
    remaining -= 1;
    if (!done && (remaining === 0 || decided(votes))) {
      done = true;
      resolveVotes([...votes]);
    }
  };
  const settled = Promise.all(
    attempts.map((attempt, index) =>
      attempt.then(
        (value) => record(index, { ok: true, value }),
        (error: unknown) => record(index, { ok: false, error }),
      ),
    ),
  ).then(() => undefined);
  if (attempts.length === 0) resolveVotes([]);
  return { votes: result, settled };
}
