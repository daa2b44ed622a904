import { BackendUnavailableError, DeadlineTimer, now } from '@lockkit/core';
import { type Cluster, Command, Redis, type RedisOptions } from 'ioredis';
import type { LuaScript } from './scripts/lua-script.js';

/** An ioredis client: a standalone `Redis` or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/**
 * A node command failed. `mayHaveRun` is true when the command reached the socket and its
 * outcome is unknown (reply timed out, connection dropped): an acquire must then be undone.
 */
export class NodeCommandError extends BackendUnavailableError {
  readonly mayHaveRun: boolean;

  constructor(message: string, mayHaveRun: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'BackendUnavailableError';
    this.mayHaveRun = mayHaveRun;
  }
}

/** Replies as strings, as ioredis's own command methods ask for them. */
const replyAsString = { replyEncoding: 'utf8' } as const;

/** Options lockkit forces on clients it creates: nothing is ever queued or replayed by ioredis. */
const ownedClientOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
} satisfies RedisOptions;

/**
 * One Redis node (or one Cluster) the provider talks to: runs scripts with a per-command
 * deadline, only on a ready connection (so no command of ours waits in ioredis's offline
 * queue past its deadline), EVALSHA with an EVAL fallback on NOSCRIPT.
 */
export class RedisNode {
  readonly client: RedisClient;
  /** True when the provider created (and so closes) the client. */
  readonly owned: boolean;
  /** The client's `keyPrefix`: ioredis prefixes KEYS, but channels we must prefix ourselves. */
  readonly keyPrefix: string;
  /** A Redis Cluster: releases use sharded pub/sub (SPUBLISH / SSUBSCRIBE, Redis ≥ 7). */
  readonly sharded: boolean;
  readonly label: string;
  /** Settles when the connection is next ready (true) or closed for good (false); shared by all waiting commands. */
  #ready: Promise<boolean> | undefined;
  /**
   * Reply deadlines of the commands in flight, on one timer (a command in flight keeps its
   * socket, and so the process, alive: the timer never does).
   */
  readonly #deadlines = new DeadlineTimer({ keepAlive: false });

  constructor(spec: string | RedisOptions | RedisClient, index: number) {
    if (typeof spec === 'string' || !isRedisClient(spec)) {
      this.client =
        typeof spec === 'string'
          ? new Redis(spec, ownedClientOptions)
          : new Redis({ ...spec, ...ownedClientOptions });
      this.owned = true;
      this.client.on('error', noop); // failures surface per command; never an unhandled 'error' event
    } else {
      this.client = spec;
      this.owned = false;
    }
    const options = this.client.options as { keyPrefix?: string | undefined };
    this.keyPrefix = options.keyPrefix ?? '';
    this.sharded = isCluster(this.client);
    this.label = `node ${index}`;
  }

  /**
   * Runs `script` within `timeoutMs` from `started` (performance.now() ms, default now: a
   * caller that already read the clock passes its reading); rejects with
   * {@link NodeCommandError} on any failure.
   */
  run(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
    started: number = now(),
  ): Promise<unknown> {
    if (this.client.status === 'ready') {
      return this.#runWithDeadline(script, keys, args, started, started + timeoutMs);
    }
    return this.#whenReady(timeoutMs).then(() =>
      this.#runWithDeadline(script, keys, args, now(), started + timeoutMs),
    );
  }

  /**
   * Closes an owned client (never an injected one): QUIT, so commands already written are
   * still answered, then the socket closes; forced after a second if the server is silent.
   */
  close(): void {
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
   * Sends the script (now: `sent`); rejects at `deadline` if no reply came (performance.now()
   * ms). The caller gets the command's own promise: its settle functions, which ioredis calls
   * with the reply, are wrapped here (to clear the deadline, to describe a failure, and to
   * answer NOSCRIPT with the source), so no promise is chained per command. At the deadline
   * the command is rejected; a later reply is ignored, and the command keeps its place in
   * ioredis's reply queue, so the replies after it stay matched.
   */
  #runWithDeadline(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    sent: number,
    deadline: number,
  ): Promise<unknown> {
    const command = this.#command('evalsha', script.sha, keys, args);
    const { resolve, reject } = command;
    let settled = false;
    const expiry = this.#deadlines.add(deadline, () => {
      settled = true;
      const waitedMs = Math.round(deadline - sent);
      reject(
        new NodeCommandError(
          `Redis ${this.label} did not answer ${script.name} within ${waitedMs} ms`,
          true,
        ),
      );
    });
    const answered = (reply: unknown): void => {
      this.#deadlines.delete(expiry);
      resolve(reply);
    };
    const failed = (error: unknown): void => {
      this.#deadlines.delete(expiry);
      if (settled) return; // the deadline's error stands
      const replied = error instanceof Error && error.name === 'ReplyError';
      reject(
        new NodeCommandError(
          `Redis ${this.label} failed ${script.name}: ${messageOf(error)}`,
          !replied,
          error,
        ),
      );
    };
    command.resolve = answered;
    command.reject = (error: Error): void => {
      // The server's script cache was flushed (restart, failover): send the source once.
      if (settled || !messageOf(error).startsWith('NOSCRIPT')) {
        failed(error);
        return;
      }
      const fallback = this.#command('eval', script.lua, keys, args);
      this.client.sendCommand(fallback);
      fallback.promise.then(answered, failed);
    };
    this.client.sendCommand(command);
    return command.promise;
  }

  /**
   * The command with its arguments set directly, as strings with the key prefix applied:
   * ioredis's constructor would flatten them with `Array.prototype.flat`, which here costs
   * more than all the rest of building and writing a command (it is given none, so it
   * flattens and stringifies nothing).
   */
  #command(
    name: 'evalsha' | 'eval',
    script: string,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Command {
    const command = new Command(name, [], replyAsString);
    const argv: string[] = [script, String(keys.length)];
    const prefix = this.keyPrefix;
    for (const key of keys) argv.push(prefix + key);
    for (const arg of args) argv.push(typeof arg === 'string' ? arg : String(arg));
    command.args = argv;
    return command;
  }

  #whenReady(timeoutMs: number): Promise<void> {
    const client = this.client;
    if (client.status === 'wait') client.connect().catch(noop); // lazy client: connect on first use
    if (client.status === 'end') {
      return Promise.reject(new NodeCommandError(`Redis ${this.label}: connection closed`, false));
    }
    this.#ready ??= new Promise<boolean>((resolve) => {
      const settle = (ready: boolean): void => {
        client.off('ready', onReady);
        client.off('end', onEnd);
        this.#ready = undefined;
        resolve(ready);
      };
      const onReady = (): void => settle(true);
      const onEnd = (): void => settle(false);
      client.once('ready', onReady);
      client.once('end', onEnd);
    });
    const ready = this.#ready;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          reject(
            new NodeCommandError(
              `Redis ${this.label} was not connected within ${Math.round(timeoutMs)} ms (status ${client.status})`,
              false,
            ),
          );
        },
        Math.max(1, timeoutMs),
      );
      void ready.then((isReady) => {
        clearTimeout(timer);
        if (isReady) resolve();
        else reject(new NodeCommandError(`Redis ${this.label}: connection closed`, false));
      });
    });
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function noop(): void {}
