import type { Cluster, Redis } from 'ioredis';
import { isCluster, type RedisClient } from './redis-clients.js';
import type { LuaScript } from './scripts/lua-script.js';

/** A script with its KEYS and ARGV, ready to run on a node. */
export interface ScriptCall {
  readonly script: LuaScript;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  /** Which replies are writes replicas must acknowledge (with `minReplicas` > 0). */
  readonly acknowledge?: (reply: unknown) => boolean;
}

/** Replica acknowledgement of a write: `WAIT replicas timeoutMs` after it, on its connection. */
export interface ReplicaAck {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** What a script call answered, and (with acknowledgement) how many replicas confirmed it. */
export interface ScriptOutcome {
  readonly reply: unknown;
  /** Replicas that acknowledged every write of the connection so far; undefined without WAIT. */
  readonly acknowledged: number | undefined;
  /** The WAIT failed after the script ran (then `acknowledged` is 0): the write stands unconfirmed. */
  readonly waitError?: unknown;
}

/**
 * Runs a script with ioredis's EVALSHA (EVAL when the node answers NOSCRIPT: its script cache
 * was flushed by a restart or a failover). With `ack`, the script and a `WAIT` go in one
 * pipeline: one round trip, on the connection that ran the script (on a Cluster, ioredis
 * routes the pipeline by the script's keys, so the WAIT goes to the primary of the lock's
 * slot). A script error rejects, as without acknowledgement; a WAIT error after a script
 * that ran resolves with `waitError` (the write is there, unconfirmed).
 */
export async function sendScript(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  ack: ReplicaAck | undefined,
): Promise<ScriptOutcome> {
  const redis = client as Redis;
  if (ack === undefined) {
    try {
      return {
        reply: await redis.evalsha(script.sha, keys.length, ...keys, ...args),
        acknowledged: undefined,
      };
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return {
        reply: await redis.eval(script.lua, keys.length, ...keys, ...args),
        acknowledged: undefined,
      };
    }
  }
  const pipelined = async (source: boolean): Promise<ScriptOutcome> => {
    const pipeline = redis.pipeline();
    if (source) pipeline.eval(script.lua, keys.length, ...keys, ...args);
    else pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
    pipeline.call('WAIT', String(ack.replicas), String(ack.timeoutMs));
    const results = (await pipeline.exec()) ?? [];
    const [scriptError, reply] = results[0] ?? [new Error('no reply to the script')];
    if (scriptError) throw scriptError;
    const [waitError, acknowledged] = results[1] ?? [new Error('no reply to WAIT')];
    // The script ran: its write must still be undone by the caller if it needed the WAIT.
    if (waitError) return { reply, acknowledged: 0, waitError };
    return { reply, acknowledged: Number(acknowledged) };
  };
  const withSource = async (): Promise<ScriptOutcome> => {
    try {
      return await pipelined(false);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return pipelined(true);
    }
  };
  try {
    return await withSource();
  } catch (error) {
    // ioredis follows a MOVED inside a pipeline only if its other commands are read-only, and
    // WAIT is not: the slot moved (resharding, failover), so learn where to and send again.
    if (!isCluster(client) || !isRedirect(error)) throw error;
    await new Promise<void>((resolve) => (client as Cluster).refreshSlotsCache(() => resolve()));
    return withSource();
  }
}

/** A Cluster redirection: the slot moved (MOVED) or is moving (ASK: retried once it moved). */
function isRedirect(error: unknown): boolean {
  return error instanceof Error && /^(MOVED|ASK) /.test(error.message);
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
