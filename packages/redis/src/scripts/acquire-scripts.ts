import { type LuaScript, luaScript, prelude } from './lua-script.js';

/*
 * Acquire scripts. Every one refuses an attempt whose cancel marker exists (the client gave up
 * on this attempt before its reply arrived, see phantom-acquire safety in the README), prunes
 * expired holders, and on success INCRs the never-deleted fencing counter.
 *
 * Mutex and semaphore attempts also keep the provider's entry in the lock's waiters set (so a
 * release wakes one provider, not all): ARGV waiterId is the provider's id, registerMs > 0
 * (re)registers it on a refused attempt, last = '1' unregisters it on a grant (no other waiter
 * of this provider is left). An attempt that is not waiting leaves the set alone and omits the
 * waiters key and those three arguments (the common uncontended call stays short).
 *
 * Reply: granted = the fencing token, an integer >= 1 (a bulk string from 10^14 on); refused =
 * an integer < 1: 0 = busy without a hint, -1 = cancelled attempt, -2 - h = busy, h ms until
 * the blocking hold runs out (a retry hint). A grant is the common reply, so it is the cheapest
 * to send and read (no string formatting on the server, no string parsing on the client).
 */

/** Mutex. KEYS: lock, fence, cancel[, waiters]. ARGV: token, leaseMs[, waiterId, registerMs, last]. */
export const acquireMutex: LuaScript = luaScript(
  'acquire-mutex',
  `${prelude('grant_token', 'register_waiter', 'refused')}
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[5] == '1' then redis.call('ZREM', KEYS[4], ARGV[3]) end
  return grant_token(KEYS[2])
end
if KEYS[4] and tonumber(ARGV[4]) > 0 then register_waiter(KEYS[4], ARGV[3], ARGV[4]) end
return refused(redis.call('PTTL', KEYS[1]))
`,
);

/**
 * Semaphore: a sorted set of holders scored by their expiry (server ms); the key itself
 * expires with its latest holder. KEYS: holders, fence, cancel[, waiters].
 * ARGV: token, leaseMs, maxCount[, waiterId, registerMs, last].
 */
export const acquireSemaphore: LuaScript = luaScript(
  'acquire-semaphore',
  `${prelude('grant_token', 'register_waiter', 'earliest_wait', 'refused')}
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local now = server_now()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  expire_at_latest(KEYS[1])
  if ARGV[6] == '1' then redis.call('ZREM', KEYS[4], ARGV[4]) end
  return grant_token(KEYS[2])
end
if KEYS[4] and tonumber(ARGV[5]) > 0 then register_waiter(KEYS[4], ARGV[4], ARGV[5]) end
return refused(earliest_wait(KEYS[1], now))
`,
);

/**
 * Reader of a RW lock: refused while a writer holds the lock or any writer is waiting (the
 * writer-waiting set, scored by each marker's expiry, gives writer preference).
 * KEYS: writer, readers, waiting writers, fence, cancel. ARGV: token, leaseMs.
 */
export const acquireRead: LuaScript = luaScript(
  'acquire-read',
  `${prelude('server_now', 'grant_token', 'expire_at_latest', 'earliest_wait', 'refused')}
if redis.call('EXISTS', KEYS[5]) == 1 then return -1 end
local writer = redis.call('PTTL', KEYS[1])
if writer ~= -2 then return refused(writer) end
local now = server_now()
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local waiting = earliest_wait(KEYS[3], now)
if waiting >= 0 then return refused(waiting) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
expire_at_latest(KEYS[2])
return grant_token(KEYS[4])
`,
);

/**
 * Writer of a RW lock: granted when there is no writer and no live reader. A writer that will
 * wait (markerMs > 0) leaves its marker in the waiting set so no new reader gets in; the
 * marker expires on its own if the writer goes away, and is removed when it is granted.
 * KEYS: writer, readers, waiting writers, fence, cancel. ARGV: token, leaseMs, waiterId, markerMs.
 */
export const acquireWrite: LuaScript = luaScript(
  'acquire-write',
  `${prelude('server_now', 'grant_token', 'expire_at_latest', 'earliest_wait', 'refused')}
if redis.call('EXISTS', KEYS[5]) == 1 then return -1 end
local now = server_now()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local hint = redis.call('PTTL', KEYS[1])
if hint == -2 then
  hint = earliest_wait(KEYS[2], now)
  if hint < 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    redis.call('ZREM', KEYS[3], ARGV[3])
    return grant_token(KEYS[4])
  end
end
local marker = tonumber(ARGV[4])
if marker > 0 then
  redis.call('ZADD', KEYS[3], now + marker, ARGV[3])
  expire_at_latest(KEYS[3])
end
return refused(hint)
`,
);

/**
 * Redlock: a grant whose nodes returned different counters draws again. Lifts the fencing
 * counter to at least the floor (the largest value drawn so far) and INCRs it: the reply is a
 * value this node never returned before. KEYS: fence. ARGV: floor.
 */
export const redrawFence: LuaScript = luaScript(
  'redraw-fence',
  `${prelude('raise_fence', 'grant_token')}
raise_fence(KEYS[1], ARGV[1])
return grant_token(KEYS[1])
`,
);
