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
 * Mutex or writer (a string key holding the token).
 * KEYS: lock, waiters[, fence, cancel].
 * ARGV: token, channel, targeted, publish[, tombstoneMs, floor].
 */
export const releaseString: LuaScript = luaScript(
  'release-string',
  `${prelude('raise_fence', 'wake_next')}
if KEYS[3] then raise_fence(KEYS[3], ARGV[6]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  wake_next(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
  return 1
end
if KEYS[4] and tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[4], '1', 'PX', ARGV[5]) end
return 0
`,
);

/**
 * Semaphore permit or reader (a sorted-set member).
 * KEYS: holders, waiters[, fence, cancel].
 * ARGV: token, channel, targeted, publish[, tombstoneMs, floor].
 */
export const releaseMember: LuaScript = luaScript(
  'release-member',
  `${prelude('raise_fence', 'wake_next')}
if KEYS[3] then raise_fence(KEYS[3], ARGV[6]) end
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expiry then
  redis.call('ZREM', KEYS[1], ARGV[1])
  wake_next(KEYS[2], ARGV[2], ARGV[3], ARGV[4])
  if tonumber(expiry) > server_now() then return 1 end
  return 0
end
if KEYS[4] and tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[4], '1', 'PX', ARGV[5]) end
return 0
`,
);

/** Mutex or writer. KEYS: lock, fence. ARGV: token, leaseMs, floor. */
export const extendString: LuaScript = luaScript(
  'extend-string',
  `${prelude('raise_fence')}
raise_fence(KEYS[2], ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`,
);

/** Semaphore permit or reader. KEYS: holders, fence. ARGV: token, leaseMs, floor. */
export const extendMember: LuaScript = luaScript(
  'extend-member',
  `${prelude('raise_fence', 'server_now', 'expire_at_latest')}
raise_fence(KEYS[2], ARGV[3])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
local now = server_now()
if tonumber(expiry) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
expire_at_latest(KEYS[1])
return 1
`,
);

/**
 * A waiting writer gives up: drop its marker and wake the readers it held back.
 * KEYS: waiting writers. ARGV: waiterId, channel, publish.
 */
export const withdrawWriter: LuaScript = luaScript(
  'withdraw-writer',
  `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call(ARGV[3], ARGV[2], '*')
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
