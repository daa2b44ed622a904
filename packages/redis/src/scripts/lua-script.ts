import { createHash } from 'node:crypto';

/**
 * A Lua script with its SHA-1, run with EVALSHA and re-sent with EVAL when the server answers
 * NOSCRIPT (its script cache is per node and is flushed on restart and failover).
 */
export interface LuaScript {
  /** Short name for error messages. */
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/**
 * Defines a script. Each call passes its own KEYS (a call may leave out trailing keys it does
 * not need, so the count is the call's, not the script's).
 */
export function luaScript(name: string, lua: string): LuaScript {
  return Object.freeze({ name, lua, sha: createHash('sha1').update(lua).digest('hex') });
}

/**
 * Lua helpers, included per script as needed (`prelude('grant_token', …)`). `server_now` is
 * the server's clock in ms (TIME is safe in scripts: scripts replicate their effects since
 * Redis 5). `raise_fence` lifts the never-deleted fencing counter to at least `floor` (a
 * decimal string, compared as a string so counters beyond 2^53 stay exact): Redlock uses it to
 * pull every node's counter up to the highest token handed out. `grant_token` INCRs the counter
 * and returns it: an integer reply (exact: Lua numbers are doubles, and below 10^14 they hold
 * it exactly), or beyond that the counter read back with GET, a bulk string. `refused` encodes
 * a refusal with its retry hint (ms, or < 0 for none) as an integer below 1 (see
 * acquire-scripts.ts).
 * Replies are only integers, bulk strings and arrays, which read the same under RESP2 and RESP3.
 */
const helpers = {
  server_now: `
local function server_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`,
  raise_fence: `
local function raise_fence(key, floor)
  if floor == '' then return end
  local current = redis.call('GET', key) or '0'
  if #current < #floor or (#current == #floor and current < floor) then
    redis.call('SET', key, floor)
  end
end`,
  grant_token: `
local function grant_token(key)
  local value = redis.call('INCR', key)
  if value < 1e14 then return value end
  return redis.call('GET', key)
end`,
  refused: `
local function refused(hint)
  if hint < 0 then return 0 end
  return -2 - hint
end`,
  expire_at_latest: `
local function expire_at_latest(key)
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if latest[2] then redis.call('PEXPIREAT', key, latest[2]) end
end`,
  // Inspection record of a hold (hash field token -> '<fence>:<since>:<owner>'); the hash
  // lasts at least as long as the hold's lease (`keep_for`), and never less than before. An
  // exclusive hold (mutex, writer) is the only one: its record replaces the hash. Redlock
  // sets a record's fencing token to the one the nodes agreed on (`set_record_fence`). An
  // empty info writes no record (`recordHolds: false`).
  record_hold: `
local function keep_for(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end
local function record_hold(key, token, fence, info, ms)
  if info == '' then return end
  redis.call('HSET', key, token, tostring(fence) .. ':' .. info)
  keep_for(key, ms)
end
local function set_record_fence(key, token, fence)
  local record = redis.call('HGET', key, token)
  if not record then return end
  local at = string.find(record, ':', 1, true)
  if at then redis.call('HSET', key, token, tostring(fence) .. string.sub(record, at)) end
end
local function record_sole_hold(key, token, fence, info, ms)
  if info == '' then return end
  redis.call('DEL', key)
  redis.call('HSET', key, token, tostring(fence) .. ':' .. info)
  redis.call('PEXPIRE', key, ms)
end`,
  // Drops a sorted set's expired holds, and their inspection records.
  prune_holds: `
local function prune_holds(set, holds, now)
  local gone = redis.call('ZRANGEBYSCORE', set, '-inf', now)
  if #gone == 0 then return end
  for _, token in ipairs(gone) do redis.call('HDEL', holds, token) end
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
end`,
  earliest_wait: `
local function earliest_wait(key, now)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then return math.max(0, tonumber(first[2]) - now) end
  return -1
end`,
  // Waiting providers of a mutex or semaphore, scored by when their registration lapses.
  register_waiter: `
local function register_waiter(key, id, ms)
  redis.call('ZADD', key, server_now() + tonumber(ms), id)
  expire_at_latest(key)
end`,
  // Wakes the provider that waited longest without retrying, or everyone ('*'). A provider
  // registers before it waits, so a mutex or semaphore nobody waits for publishes nothing.
  // A provider whose id starts with '~' also listens on `channel:<id>`, and its wake-up goes
  // there, to it alone, not to every provider subscribed to the lock (older providers get
  // theirs on `channel`, named in the message). `publish` is PUBLISH, or SPUBLISH on a Redis
  // Cluster (sharded: the message goes to subscribers of this lock's slot on this node, never
  // over the cluster bus; `channel:<id>` has the lock's hash tag, so the same slot).
  wake_next: `
local function wake_next(key, channel, targeted, publish)
  if targeted ~= '1' then
    redis.call(publish, channel, '*')
    return
  end
  if redis.call('EXISTS', key) == 0 then return end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', server_now())
  local first = redis.call('ZRANGE', key, 0, 0)[1]
  if first and string.sub(first, 1, 1) == '~' then
    redis.call(publish, channel .. ':' .. first, first)
  else
    redis.call(publish, channel, first or '*')
  end
end`,
} as const;

type Helper = keyof typeof helpers;

const needs: Partial<Record<Helper, readonly Helper[]>> = {
  register_waiter: ['server_now', 'expire_at_latest'],
  wake_next: ['server_now'],
};

/** The Lua source of the named helpers and the helpers they use, in a valid order. */
export function prelude(...names: readonly Helper[]): string {
  const wanted = new Set<Helper>();
  const add = (name: Helper): void => {
    for (const dependency of needs[name] ?? []) add(dependency);
    wanted.add(name);
  };
  for (const name of names) add(name);
  return [...wanted].map((name) => helpers[name]).join('');
}
