import { BackendUnavailableError } from '@lockkit/core';
import { DeadlineTimer, now } from '@lockkit/core/backend';
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import type { LuaScript } from './scripts/lua-script.js';

/** An ioredis client: a standalone `Redis` or a `Cluster`. */
export type RedisClient = Redis | Cluster;

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

/** ioredis 6 types its options constructor per reply mapping; both majors accept this. */
type OptionsConstructor = new (options: RedisOptions) => Redis;

/**
 * Options lockkit forces on clients it creates: nothing is ever queued or replayed by ioredis,
 * and nothing reconnects in the background — a command connects when it needs the connection,
 * so an idle provider holds no timer and each attempt during an outage fails at once.
 */
const ownedClientOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
} satisfies RedisOptions;

/**
 * One Redis node (or one Cluster) the provider talks to: runs scripts with ioredis's EVALSHA
 * (EVAL when the node answers NOSCRIPT), each within a deadline that covers connecting too,
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

  constructor(spec: string | RedisOptions | RedisClient, index: number, count: number) {
    if (typeof spec === 'string' || !isRedisClient(spec)) {
      this.client =
        typeof spec === 'string'
          ? new Redis(spec, ownedClientOptions)
          : new (Redis as OptionsConstructor)({ ...spec, ...ownedClientOptions });
      this.owned = true;
      this.client.on('error', noop); // failures surface per command; never an unhandled 'error' event
    } else {
      this.client = spec;
      this.owned = false;
    }
    const options = this.client.options as { keyPrefix?: string | undefined };
    this.keyPrefix = options.keyPrefix ?? '';
    this.sharded = isCluster(this.client);
    const address = addressOf(this.client);
    this.label = count === 1 ? `Redis ${address}` : `Redis node ${index} (${address})`;
  }

  /**
   * Runs `script` within `timeoutMs` from `started` (performance.now() ms, default now: a
   * caller that already read the clock passes its reading), connecting first if need be;
   * rejects with {@link NodeCommandError} on any failure. A reply after the deadline is
   * ignored (the command keeps its place in ioredis's reply queue).
   */
  run(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
    started: number = now(),
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
      const expiry = this.#deadlines.add(started + timeoutMs, () => {
        const ms = Math.round(timeoutMs);
        const what = sent ? `did not answer ${script.name}` : 'could not connect';
        const cause = new Error(`no answer within ${ms} ms (connection ${this.client.status})`);
        finish(new NodeCommandError(`${this.label} ${what} within ${ms} ms`, sent, cause));
        if (!sent && this.owned && this.client.status !== 'ready') this.client.disconnect();
      });
      const failed = (error: unknown): void => {
        const replied = error instanceof Error && error.name === 'ReplyError';
        const message = `${this.label} failed ${script.name}: ${messageOf(error)}`;
        finish(new NodeCommandError(message, !replied, error));
      };
      const send = (): void => {
        if (!open) return;
        sent = true;
        const client = this.client as Redis;
        client.evalsha(script.sha, keys.length, ...keys, ...args).then(
          (reply) => finish(undefined, reply),
          (error: unknown) => {
            // The server's script cache was flushed (restart, failover): send the source once.
            if (!open || !messageOf(error).startsWith('NOSCRIPT')) return failed(error);
            client
              .eval(script.lua, keys.length, ...keys, ...args)
              .then((reply) => finish(undefined, reply), failed);
          },
        );
      };
      if (this.#inFlight++ === 0 && this.owned) streamOf(this.client)?.ref();
      if (this.client.status === 'ready') send();
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

/** An ioredis `Cluster` (also from another copy of ioredis). */
export function isCluster(client: RedisClient): boolean {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/** host:port or socket path of a standalone client; the startup nodes of a Cluster. */
function addressOf(client: RedisClient): string {
  if (isCluster(client)) {
    const nodes = (client as { startupNodes?: readonly unknown[] }).startupNodes ?? [];
    const named = nodes.map((node) =>
      typeof node === 'object' && node !== null
        ? `${(node as { host?: string }).host ?? 'localhost'}:${(node as { port?: number }).port ?? 6379}`
        : String(node),
    );
    return `cluster ${named.join(', ')}`;
  }
  const { path, host, port } = client.options as { path?: string; host?: string; port?: number };
  return path ? path : `${host ?? 'localhost'}:${port ?? 6379}`;
}

/** The socket of a standalone client (undefined before it first connects). */
function streamOf(client: RedisClient): { ref(): void; unref(): void } | undefined {
  return (client as Redis).stream as { ref(): void; unref(): void } | undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function noop(): void {}
