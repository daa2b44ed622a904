import { setMaxListeners } from 'node:events';
import { BackendUnavailableError } from '@lockkit/core';
import { delay, now } from '@lockkit/core/backend';
import type { RedisNodeSpec } from './redis-lock-options.js';
import { RedisNode } from './redis-node.js';
import { collectVotes, quorumOf, type Vote } from './redlock-quorum.js';
import type { ReplicaAck, ScriptCall } from './script-sender.js';

/** Every node's answer so far (undefined: not answered when the outcome was decided). */
export type Votes = readonly (Vote<unknown> | undefined)[];

/**
 * The nodes of a provider (one, or N independent Redlock nodes) and the ways an operation
 * runs on them: voted (decided by a quorum), or in the background (cleanups, best effort).
 */
export class RedisNodeSet {
  readonly nodes: readonly RedisNode[];
  readonly majority: number;
  readonly #commandTimeoutMs: number;
  readonly #closing = new AbortController();

  constructor(
    specs: readonly RedisNodeSpec[],
    commandTimeoutMs: number,
    ack: ReplicaAck | undefined,
  ) {
    this.nodes = specs.map((spec, index) => new RedisNode(spec, index, specs.length, ack));
    this.majority = quorumOf(this.nodes.length);
    this.#commandTimeoutMs = commandTimeoutMs;
    // Every pending cleanup retry listens to it (each removes its listener when done).
    setMaxListeners(0, this.#closing.signal);
  }

  get size(): number {
    return this.nodes.length;
  }

  /**
   * Runs a call on every node at once; resolves when `quorum` nodes said yes (`isYes`), when
   * they no longer can, or when all answered. Stragglers finish in the background. Each node
   * has the command timeout from `started` (default now) to answer. `call` is the same on
   * every node, or made per node. A reply that is neither yes nor `isNo` (default: every reply
   * that is not yes) leaves the outcome open until the other nodes answer.
   */
  vote(
    quorum: number,
    call: ScriptCall | ((node: RedisNode) => ScriptCall),
    isYes: (reply: unknown) => boolean,
    started: number = now(),
    isNo: (reply: unknown) => boolean = (reply) => !isYes(reply),
  ): Promise<Votes> {
    if (this.nodes.length === 1) {
      const node = this.nodes[0] as RedisNode;
      const { script, keys, args, acknowledge } = typeof call === 'function' ? call(node) : call;
      return node
        .run(script, keys, args, this.#commandTimeoutMs, started, acknowledge)
        .then(answeredVote, failedVote);
    }
    const attempts = this.nodes.map((node) => {
      const { script, keys, args, acknowledge } = typeof call === 'function' ? call(node) : call;
      return node.run(script, keys, args, this.#commandTimeoutMs, started, acknowledge);
    });
    const noLimit = this.nodes.length - quorum;
    const { votes, settled } = collectVotes(attempts, (sofar) => {
      let yes = 0;
      let no = 0;
      for (const vote of sofar) {
        if (vote === undefined) continue;
        if (vote.ok && isYes(vote.value)) yes += 1;
        else if (!vote.ok || isNo(vote.value)) no += 1;
      }
      return yes >= quorum || no > noLimit;
    });
    settled.catch(noop);
    return votes;
  }

  /**
   * Runs a call on every node at once and resolves every node's answer (each within the
   * command timeout): for reads and breaks that must hear from all the nodes they can.
   */
  async all(call: (node: RedisNode) => ScriptCall): Promise<Votes> {
    return Promise.all(
      this.nodes.map((node) => {
        const { script, keys, args, acknowledge } = call(node);
        return node.run(script, keys, args, this.#commandTimeoutMs, now(), acknowledge).then(
          (value): Vote<unknown> => ({ ok: true, value }),
          (error: unknown): Vote<unknown> => ({ ok: false, error }),
        );
      }),
    );
  }

  /**
   * For replies 1 (yes) / 0 (no): true when `quorum` nodes said yes, false when more than
   * N − quorum definitively said no, undefined when failures leave it unknown.
   */
  verdict(quorum: number, votes: Votes): boolean | undefined {
    let yes = 0;
    let no = 0;
    for (const vote of votes) {
      if (vote?.ok && vote.value === 1) yes += 1;
      else if (vote?.ok) no += 1;
    }
    if (yes >= quorum) return true;
    if (no > this.nodes.length - quorum) return false;
    return undefined;
  }

  /** The error for an operation that no quorum decided (node failures kept as the cause). */
  unavailable(lockName: string, operation: string, votes: Votes): BackendUnavailableError {
    const errors = votes.flatMap((vote) => (vote && !vote.ok ? [vote.error] : []));
    if (this.nodes.length === 1 && errors[0] instanceof BackendUnavailableError) return errors[0];
    // Name every node that did not say yes: the failed ones with their error, and those not
    // heard from when the outcome was decided.
    const why = this.nodes.flatMap((node, index) => {
      const vote = votes[index];
      if (vote === undefined) return [`${node.label}: no answer yet`];
      if (vote.ok) return [];
      return [vote.error instanceof Error ? vote.error.message : String(vote.error)];
    });
    return new BackendUnavailableError(
      `Redis ${operation} of "${lockName}" reached no majority: ${errors.length} of ${this.nodes.length} nodes failed (${why.join('; ')})`,
      {
        lockName,
        cause: new AggregateError(errors, 'Redis node errors'),
        // Waiting helps unless every failed node refused the setup (credentials, database).
        retryable: errors.some((error) => BackendUnavailableError.isRetryable(error)),
      },
    );
  }

  /** Runs a call on each node for which `skip` is false, best effort, in the background. */
  everywhere(callFor: (node: RedisNode) => ScriptCall, skip: (index: number) => boolean): void {
    this.nodes.forEach((node, index) => {
      if (skip(index)) return;
      const { script, keys, args } = callFor(node);
      node.run(script, keys, args, this.#commandTimeoutMs).catch(noop);
    });
  }

  /**
   * A cleanup that must reach `node` (undoing an attempt): retried until it got through, for
   * up to `giveUpAfterMs` or until close. It is written after the attempt on the same
   * connection, so the server runs it after the attempt.
   */
  persist(node: RedisNode, { script, keys, args }: ScriptCall, giveUpAfterMs: number): void {
    const closing = this.#closing.signal;
    const giveUpAt = now() + giveUpAfterMs;
    const attempt = async (): Promise<void> => {
      for (;;) {
        try {
          await node.run(script, keys, args, this.#commandTimeoutMs);
          return;
        } catch {
          if (closing.aborted || now() > giveUpAt) return;
          await delay(this.#commandTimeoutMs, closing).catch(noop);
          if (closing.aborted) return;
        }
      }
    };
    attempt().catch(noop);
  }

  /** Stops cleanup retries and closes owned clients (commands already written still run). */
  close(): void {
    this.#closing.abort();
    for (const node of this.nodes) node.close();
  }
}

function noop(): void {}

const answeredVote = (value: unknown): Votes => [{ ok: true, value }];
const failedVote = (error: unknown): Votes => [{ ok: false, error }];
