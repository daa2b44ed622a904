import { type LuaScript, luaScript, prelude } from './lua-script.js';

/*
 * Acquire scripts. Every one refuses an attempt whose cancel marker exists (the client gave up
 * on this attempt before its reply arrived, see phantom-acquire safety in the README), prunes
 * expired holders, and on success INCRs the never-deleted fencing counter and writes the hold's
 * inspection record into the holds hash (ARGV info = '<since ms>:<owner>', see record_hold).
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

/**
 * Mutex. KEYS: lock, fence, cancel, holds[, waiters].
 * ARGV: token, leaseMs, info ('<since>:<owner>')[, waiterId, registerMs, last].
 */
export const acquireMutex: LuaScript = luaScript(
  'acquire-mutex',
  `${prelude('grant_token', 'register_waiter', 'refused', 'record_hold')}
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[6] == '1' then redis.call('ZREM', KEYS[5], ARGV[4]) end
  local fence = grant_token(KEYS[2])
  record_sole_hold(KEYS[4], ARGV[1], fence, ARGV[3], ARGV[2])
  return fence
end
if KEYS[5] and tonumber(ARGV[5]) > 0 then register_waiter(KEYS[5], ARGV[4], ARGV[5]) end
return refused(redis.call('PTTL', KEYS[1]))
`,
);

/**
 * Semaphore: a sorted set of holders scored by their expiry (server ms); the key itself
 * expires with its latest holder. A grant of n permits is n members with one expiry: the token,
 * then token#2 … token#n (so a holder of one permit is its bare token, as before weighted
 * permits, and ZCARD counts permits).
 * Head of line: a weighted request (n > 1) that waits keeps a reservation in the reservations
 * set (member: its id, which begins with its arrival time, so ids sort in arrival order;
 * score: when it lapses without a refresh by a retry). A request is refused while a reservation
 * older than its own (any reservation, for a request without one) is live, so no later request
 * passes a waiting weighted one. A grant that ends a reservation publishes '!' (wake every
 * waiter), so requests it held back retry at once.
 * Inspection: the grant records one hold, under the token (the '#i' members have no record
 * of their own; inspect-holds folds them into the token's hold and counts its permits).
 * KEYS: holders, fence, cancel, holds, reservations[, waiters].
 * ARGV: token, leaseMs, maxCount, info, permits, reserveId, reserveMs, channel, publish[,
 * waiterId, registerMs, last]. reserveId is '' and reserveMs 0 for a request without a
 * reservation.
 */
export const acquireSemaphore: LuaScript = luaScript(
  'acquire-semaphore',
  `${prelude('grant_token', 'register_waiter', 'earliest_wait', 'refused', 'record_hold', 'prune_holds')}
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local now = server_now()
prune_holds(KEYS[1], KEYS[4], now)
local id = ARGV[6]
local behind = false
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  for _, other in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
    if other ~= id and (id == '' or other < id) then behind = true end
  end
end
local permits = tonumber(ARGV[5])
if not behind and redis.call('ZCARD', KEYS[1]) + permits <= tonumber(ARGV[3]) then
  local expiry = now + tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], expiry, ARGV[1])
  for i = 2, permits do redis.call('ZADD', KEYS[1], expiry, ARGV[1] .. '#' .. i) end
  expire_at_latest(KEYS[1])
  if id ~= '' and redis.call('ZREM', KEYS[5], id) == 1 then redis.call(ARGV[9], ARGV[8], '!') end
  if ARGV[12] == '1' then redis.call('ZREM', KEYS[6], ARGV[10]) end
  local fence = grant_token(KEYS[2])
  record_hold(KEYS[4], ARGV[1], fence, ARGV[4], ARGV[2])
  return fence
end
local reserve = tonumber(ARGV[7])
if reserve > 0 then
  redis.call('ZADD', KEYS[5], now + reserve, id)
  expire_at_latest(KEYS[5])
end
if KEYS[6] and tonumber(ARGV[11]) > 0 then register_waiter(KEYS[6], ARGV[10], ARGV[11]) end
return refused(earliest_wait(KEYS[1], now))
`,
);

/**
 * Reader of a RW lock: refused while a writer holds the lock or any writer is waiting (the
 * writer-waiting set, scored by each marker's expiry, gives writer preference).
 * KEYS: writer, readers, waiting writers, fence, cancel, holds. ARGV: token, leaseMs, info.
 */
export const acquireRead: LuaScript = luaScript(
  'acquire-read',
  `${prelude('server_now', 'grant_token', 'expire_at_latest', 'earliest_wait', 'refused', 'record_hold', 'prune_holds')}
if redis.call('EXISTS', KEYS[5]) == 1 then return -1 end
local writer = redis.call('PTTL', KEYS[1])
if writer ~= -2 then return refused(writer) end
local now = server_now()
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local waiting = earliest_wait(KEYS[3], now)
if waiting >= 0 then return refused(waiting) end
prune_holds(KEYS[2], KEYS[6], now)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
expire_at_latest(KEYS[2])
local fence = grant_token(KEYS[4])
record_hold(KEYS[6], ARGV[1], fence, ARGV[3], ARGV[2])
return fence
`,
);

/**
 * Writer of a RW lock: granted when there is no writer and no live reader. A writer that will
 * wait (markerMs > 0) leaves its marker in the waiting set so no new reader gets in; the
 * marker expires on its own if the writer goes away, and is removed when it is granted.
 * KEYS: writer, readers, waiting writers, fence, cancel, holds.
 * ARGV: token, leaseMs, waiterId, markerMs, info.
 */
export const acquireWrite: LuaScript = luaScript(
  'acquire-write',
  `${prelude('server_now', 'grant_token', 'expire_at_latest', 'earliest_wait', 'refused', 'record_hold')}
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
    local fence = grant_token(KEYS[4])
    record_sole_hold(KEYS[6], ARGV[1], fence, ARGV[5], ARGV[2])
    return fence
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
 * value this node never returned before; the hold's inspection record takes it. Only while
 * the node still holds the grant (0 otherwise): a lease that ran out between the acquire and
 * this draw (a server clock jumped ahead) may have gone to another grant, whose token must
 * stay above ours.
 * KEYS: fence, holds, hold (string or sorted set). ARGV: floor, token, member ('1': a member
 * of the hold set, '': the string's value).
 */
export const redrawFence: LuaScript = luaScript(
  'redraw-fence',
  `${prelude('raise_fence', 'grant_token', 'record_hold', 'server_now')}
if ARGV[3] == '1' then
  local expiry = redis.call('ZSCORE', KEYS[3], ARGV[2])
  if not expiry or tonumber(expiry) <= server_now() then return 0 end
elseif redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return 0
end
raise_fence(KEYS[1], ARGV[1])
local fence = grant_token(KEYS[1])
set_record_fence(KEYS[2], ARGV[2], fence)
return fence
`,
);
