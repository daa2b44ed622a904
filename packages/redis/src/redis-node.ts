import { BackendUnavailableError } from '@lockkit/core';
import { DeadlineTimer, now } from '@lockkit/core/backend';
import type { Redis, RedisOptions } from 'ioredis';
import { addressOf, createOwnedClient, isCluster, type RedisClient } from './redis-clients.js';
import { type ReplicaAck, sendScript } from './script-sender.js';
import type { LuaScript } from './scripts/lua-script.js';

/**
 * A node command failed. `mayHaveRun` is true when the command reached the socket and its
 * outcome is unknown (reply timed out, connection dropped): an acquire must then be undone.
 */
export class NodeCommandError extends BackendUnavailableError {
  readonly mayHaveRun: boolean;

  constructor(message: string, mayHaveRun: boolean, cause: unknown, retryable = true) {
    super(message, { cause, retryable });
    this.name = 'BackendUnavailableError';
    this.mayHaveRun = mayHaveRun;
  }
}

/**
 * A connect-time reply that stays until someone changes the setup: wrong password or ACL
 * user (WRONGPASS, NOAUTH), a user without the needed commands (NOPERM), a database index
 * the server does not have.
 */
function isSetupReply(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /^(WRONGPASS|NOAUTH|NOPERM)\b|DB index is out of range/.test(message);
}

/**
 * One Redis node (or one Cluster, or one Sentinel-managed primary) the provider talks to: runs
 * scripts with ioredis's EVALSHA (EVAL when the node answers NOSCRIPT) — followed by a `WAIT`
 * for replicas when the call asks for acknowledgement — each within a deadline that covers
 * connecting too,
 * only on a ready connection (so nothing of ours waits in ioredis's offline queue). A client
 * the provider created holds its socket open (ref'd) only while a command of ours is in flight.
 */
export class RedisNode {
  readonly client: RedisClient;
  /** True when the provider created (and so closes) the client. */
  readonly owned: boolean;
  /** The client's `keyPrefix`: ioredis prefixes KEYS, but channels we must prefix ourselves. */
  readonly keyPrefix: string;
  /** A Redis Cluster: releases use sharded pub/sub (SPUBLISH / SSUBSCRIBE, Redis ≥ 7). */
  readonly sharded: boolean;
  /** How errors name this node: `Redis 127.0.0.1:6379`, or `Redis node 2 (…)` in a Redlock. */
  readonly label: string;
  /** Settles when the connection is ready, or rejects with why it is not; shared by all waiting commands. */
  #connecting: Promise<void> | undefined;
  /** Our commands in flight (owned clients: the socket is ref'd while there are any). */
  #inFlight = 0;
  #closed = false;
  /** Command deadlines on one timer that never keeps the process alive (the socket does). */
  readonly #deadlines = new DeadlineTimer({ keepAlive: false });
  /** Replica acknowledgement of writes that ask for it (undefined: none, `minReplicas` 0). */
  readonly #ack: ReplicaAck | undefined;
  /** A write was not confirmed by enough replicas (Sentinel only; see run). */
  #unconfirmed = false;
  /** Settles once a connection we dropped has closed (see #leave). */
  #leaving: Promise<void> | undefined;
  /** An owned client that finds its primary through Sentinel (it asks again on each connect). */
  readonly #viaSentinels: boolean;

  constructor(
    spec: string | RedisOptions | RedisClient,
    index: number,
    count: number,
    ack?: ReplicaAck,
  ) {
    this.#ack = ack;
    if (typeof spec === 'string' || !isRedisClient(spec)) {
      this.client = createOwnedClient(spec, count === 1 ? 'nodes' : `nodes[${index}]`);
      this.owned = true;
      this.client.on('error', noop); // failures surface per command; never an unhandled 'error' event
    } else {
      this.client = spec;
      this.owned = false;
    }
    const options = this.client.options as {
      keyPrefix?: string | undefined;
      sentinels?: readonly unknown[] | null;
    };
    this.keyPrefix = options.keyPrefix ?? '';
    this.#viaSentinels = this.owned && (options.sentinels?.length ?? 0) > 0;
    this.sharded = isCluster(this.client);
    const address = addressOf(this.client);
    this.label = count === 1 ? `Redis ${address}` : `Redis node ${index} (${address})`;
  }

  /**
   * Runs `script` within `timeoutMs` from `started` (performance.now() ms, default now: a
   * caller that already read the clock passes its reading), connecting first if need be;
   * rejects with {@link NodeCommandError} on any failure. A reply after the deadline is
   * ignored (the command keeps its place in ioredis's reply queue). `acknowledge` says which
   * replies are writes that replicas must confirm (with `minReplicas` > 0): the script is then
   * followed by `WAIT`, the deadline grows by `replicaTimeoutMs`, and a write confirmed by too
   * few replicas rejects as a command that may have run (the caller undoes it).
   */
  run(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
    started: number = now(),
    acknowledge?: (reply: unknown) => boolean,
  ): Promise<unknown> {
    if (this.#closed) {
      const closed = new Error('the provider is closed');
      return Promise.reject(
        new NodeCommandError(`${this.label}: ${closed.message}`, false, closed),
      );
    }
    return new Promise((resolve, reject) => {
      let open = true;
      let sent = false;
      const finish = (error: NodeCommandError | undefined, reply?: unknown): void => {
        if (!open) return;
        open = false;
        this.#deadlines.delete(expiry);
        if (--this.#inFlight === 0 && this.owned) streamOf(this.client)?.unref();
        if (error) reject(error);
        else resolve(reply);
      };
      const ack = acknowledge === undefined ? undefined : this.#ack;
      if (ack) timeoutMs += ack.timeoutMs;
      const expiry = this.#deadlines.add(started + timeoutMs, () => {
        const ms = Math.round(timeoutMs);
        const what = sent ? `did not answer ${script.name}` : 'could not connect';
        const cause = new Error(`no answer within ${ms} ms (connection ${this.client.status})`);
        finish(new NodeCommandError(`${this.label} ${what} within ${ms} ms`, sent, cause));
        if (!sent && this.owned && this.client.status !== 'ready') this.client.disconnect();
      });
      const failed = (error: unknown): void => {
        const replied = error instanceof Error && error.name === 'ReplyError';
        // A demoted primary (Sentinel failover): ask the Sentinels again on the next command.
        if (this.owned && messageOf(error).startsWith('READONLY')) this.#leave();
        const message = `${this.label} failed ${script.name}: ${messageOf(error)}`;
        finish(new NodeCommandError(message, !replied, error));
      };
      const send = (): void => {
        if (!open) return;
        sent = true;
        sendScript(this.client, script, keys, args, ack).then((outcome) => {
          const { reply, acknowledged = 0, waitError } = outcome;
          if (ack && acknowledged < ack.replicas && acknowledge?.(reply)) {
            // Written but not confirmed: the caller undoes it (mayHaveRun), here. Through
            // Sentinel, this node may be a primary the Sentinels already replaced (it learns
            // only when they demote it, ~10 s after a SENTINEL FAILOVER): the next write that
            // needs confirming asks them again.
            if (this.#viaSentinels) this.#unconfirmed = true;
            const what = waitError === undefined ? '' : ` (WAIT failed: ${messageOf(waitError)})`;
            const cause =
              waitError ??
              new Error(
                `WAIT ${ack.replicas} ${ack.timeoutMs}: ${acknowledged} replica(s) acknowledged`,
              );
            const message = `${this.label}: ${acknowledged} of ${ack.replicas} replicas acknowledged ${script.name} within ${ack.timeoutMs} ms${what}`;
            finish(new NodeCommandError(message, true, cause));
          } else finish(undefined, reply);
        }, failed);
      };
      if (this.#inFlight++ === 0 && this.owned) streamOf(this.client)?.ref();
      if (this.#unconfirmed && acknowledge !== undefined) {
        this.#unconfirmed = false;
        this.#leave();
      }
      const leaving = this.#leaving;
      if (leaving) leaving.then(() => this.#connected()).then(send, finish);
      else if (this.client.status === 'ready') send();
      else this.#connected().then(send, finish);
    });
  }

  /**
   * Closes an owned client (never an injected one): QUIT, so commands already written are
   * still answered, then the socket closes; forced after a second if the server is silent.
   */
  close(): void {
    this.#closed = true;
    this.#deadlines.stopIfIdle(); // else it still expires what is in flight
    if (!this.owned) return;
    const client = this.client;
    if (client.status !== 'ready') {
      client.disconnect();
      return;
    }
    const force = setTimeout(() => client.disconnect(), 1000);
    force.unref();
    client.quit().then(
      () => clearTimeout(force),
      () => {
        clearTimeout(force);
        client.disconnect();
      },
    );
  }

  /**
   * Drops an owned client's connection so the next command connects again (through the
   * Sentinels: to the primary they name now); commands issued before it has closed wait.
   */
  #leave(): void {
    const client = this.client;
    if (this.#leaving || client.status === 'end' || client.status === 'wait') return;
    this.#leaving = new Promise<void>((resolve) => {
      client.once('end', () => {
        this.#leaving = undefined;
        resolve();
      });
    });
    client.disconnect();
  }

  /**
   * Resolves once the client is ready; rejects with the client's error (refused, unknown host,
   * wrong password, no such database…) as soon as it reports one. Connects an owned client
   * (or a lazy injected one) that is not connected; a failed owned client is disconnected, so
   * it never goes on to a half-set-up connection (ioredis reports a failed SELECT, then
   * carries on in database 0).
   */
  #connected(): Promise<void> {
    const client = this.client;
    if (client.status === 'end' && !this.owned) {
      const closed = new Error('the client was closed by its owner');
      return Promise.reject(
        new NodeCommandError(`${this.label}: ${closed.message}`, false, closed),
      );
    }
    if (this.#connecting) return this.#connecting;
    const connecting = new Promise<void>((resolve, reject) => {
      const settle = (error?: unknown): void => {
        client.off('ready', onReady);
        client.off('error', onError);
        client.off('end', onEnd);
        if (this.#connecting === connecting) this.#connecting = undefined;
        if (error === undefined) {
          resolve();
          return;
        }
        if (this.owned) client.disconnect();
        const message = `${this.label} could not connect: ${messageOf(error)}`;
        reject(new NodeCommandError(message, false, error, !isSetupReply(error)));
      };
      const onReady = (): void => settle();
      const onError = (error: unknown): void => settle(error);
      const onEnd = (): void => settle(new Error('connection closed'));
      client.on('ready', onReady);
      client.on('error', onError);
      client.on('end', onEnd);
    });
    this.#connecting = connecting;
    if (client.status === 'wait' || client.status === 'end') client.connect().catch(noop);
    return connecting;
  }
}

/** Duck-typed so clients from another copy of ioredis are accepted too. */
export function isRedisClient(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Redis).evalsha === 'function' &&
    typeof (value as Redis).duplicate === 'function' &&
    typeof (value as Redis).status === 'string'
  );
}

/** The socket of a standalone client (undefined before it first connects). */
function streamOf(client: RedisClient): { ref(): void; unref(): void } | undefined {
  return (client as Redis).stream as { ref(): void; unref(): void } | undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function noop(): void {}
