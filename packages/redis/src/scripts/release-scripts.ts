import { type LuaScript, luaScript, prelude } from './lua-script.js';

/*
 * Release, extend and withdraw scripts: all token-checked, never a blind DEL. Release and
 * extend also raise the fencing counter to ARGV floor (Redlock keeps the nodes' counters
 * converging; '' = skip). Release publishes on the lock's channel so waiters retry at once:
 * the id of the provider that waited longest (targeted = '1': mutex, semaphore), or '*' for
 * every waiter (RW locks).
 * A release with tombstoneMs > 0 that finds no hold of ours leaves a cancel marker, so an
 * acquire of the same attempt that reaches the server later (a timed-out reply) is refused.
 * A plain release (no tombstone, no floor: the common single-node case) omits the fence and
 * cancel keys and those two arguments. ARGV publish is the command that publishes: PUBLISH,
 * or SPUBLISH on a Redis Cluster.
 * Reply: 1 = it was ours (released / extended), 0 = not ours.
 */

/**
 * Mutex or writer (a string key holding the token). Its inspection record goes either way.
 * KEYS: lock, waiters, holds[, fence, cancel].
 * ARGV: token, channel, targeted, publish[, tombstoneMs, floor].
 */
export const releaseString: LuaScript = luaScript(
  'release-string',
  `${prelude('raise_fence', 'wake_next')}
if KEYS[4] then raise_fence(KEYS[4], ARGV[6]) end
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  wake_next(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
  return 1
end
if KEYS[5] and tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[5], '1', 'PX', ARGV[5]) end
return 0
`,
);

/**
 * Reader (a sorted-set member). Its inspection record goes either way.
 * KEYS: holders, waiters, holds[, fence, cancel].
 * ARGV: token, channel, targeted, publish[, tombstoneMs, floor].
 */
export const releaseMember: LuaScript = luaScript(
  'release-member',
  `${prelude('raise_fence', 'wake_next')}
if KEYS[4] then raise_fence(KEYS[4], ARGV[6]) end
redis.call('HDEL', KEYS[3], ARGV[1])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expiry then
  redis.call('ZREM', KEYS[1], ARGV[1])
  wake_next(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
  if tonumber(expiry) > server_now() then return 1 end
  return 0
end
if KEYS[5] and tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[5], '1', 'PX', ARGV[5]) end
return 0
`,
);

/**
 * Semaphore hold of n permits (members token, token#2 … token#n, see acquireSemaphore).
 * Wakes every waiter ('!') when it frees several permits or a weighted request holds a
 * reservation (the one waiter a targeted wake-up reaches may be held back by it), else the
 * provider that waited longest. Its inspection record (the token's field) goes either way.
 * KEYS: holders, waiters, reservations, holds[, fence, cancel].
 * ARGV: token, channel, publish, permits[, tombstoneMs, floor].
 */
export const releasePermits: LuaScript = luaScript(
  'release-permits',
  `${prelude('raise_fence', 'wake_next')}
if KEYS[5] then raise_fence(KEYS[5], ARGV[6]) end
redis.call('HDEL', KEYS[4], ARGV[1])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expiry then
  local permits = tonumber(ARGV[4])
  redis.call('ZREM', KEYS[1], ARGV[1])
  for i = 2, permits do redis.call('ZREM', KEYS[1], ARGV[1] .. '#' .. i) end
  if permits > 1 or redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call(ARGV[3], ARGV[2], '!')
  else
    wake_next(KEYS[2], ARGV[2], '1', ARGV[3])
  end
  if tonumber(expiry) > server_now() then return 1 end
  return 0
end
if KEYS[6] and tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[6], '1', 'PX', ARGV[5]) end
return 0
`,
);

/**
 * Mutex or writer. KEYS: lock, fence, holds. ARGV: token, leaseMs, floor (Redlock: the
 * agreed fencing token, which the hold's record takes too).
 */
export const extendString: LuaScript = luaScript(
  'extend-string',
  `${prelude('raise_fence', 'record_hold')}
raise_fence(KEYS[2], ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  keep_for(KEYS[3], ARGV[2])
  if ARGV[3] ~= '' then set_record_fence(KEYS[3], ARGV[1], ARGV[3]) end
  return 1
end
return 0
`,
);

/**
 * Semaphore hold or reader. KEYS: holders, fence, holds. ARGV: token, leaseMs, floor[, permits]
 * (a semaphore hold of n permits is the members token, token#2 … token#n; its inspection
 * record is the token's alone).
 */
export const extendMember: LuaScript = luaScript(
  'extend-member',
  `${prelude('raise_fence', 'server_now', 'expire_at_latest', 'record_hold')}
raise_fence(KEYS[2], ARGV[3])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
local now = server_now()
local permits = tonumber(ARGV[4] or '1')
if tonumber(expiry) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  for i = 2, permits do redis.call('ZREM', KEYS[1], ARGV[1] .. '#' .. i) end
  redis.call('HDEL', KEYS[3], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
for i = 2, permits do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1] .. '#' .. i) end
expire_at_latest(KEYS[1])
keep_for(KEYS[3], ARGV[2])
if ARGV[3] ~= '' then set_record_fence(KEYS[3], ARGV[1], ARGV[3]) end
return 1
`,
);

/**
 * A waiting writer gives up: drop its marker and wake the readers it held back ('*'); or a
 * waiting weighted semaphore request drops its reservation and wakes every waiter ('!').
 * KEYS: waiting writers or reservations. ARGV: waiterId, channel, publish, message.
 */
export const withdrawWriter: LuaScript = luaScript(
  'withdraw-writer',
  `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call(ARGV[3], ARGV[2], ARGV[4])
  return 1
end
return 0
`,
);

/**
 * A provider stops waiting for a mutex or semaphore: its entry goes; with passOn = '1' (it may
 * have been woken and not used it) the next provider is woken. KEYS: waiters. ARGV: waiterId,
 * channel, passOn, publish.
 */
export const unregisterWaiter: LuaScript = luaScript(
  'unregister-waiter',
  `${prelude('wake_next')}
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[3] == '1' then wake_next(KEYS[1], ARGV[2], '1', ARGV[4]) end
return 1
`,
);
