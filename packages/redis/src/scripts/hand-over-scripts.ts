import { type LuaScript, luaScript, prelude } from './lua-script.js';

/*
 * Hand-over: a resume moves the hold from the exported token to a fresh one the resumer drew,
 * in one script per node, so a token is resumed once — a second resume (and the exporter's
 * own release or extension) finds the old token gone. Like extend, the scripts raise the
 * fencing counter to ARGV floor (Redlock; '' = skip) and set the lease to leaseMs from now.
 * The hold's inspection record moves to the new token (none with `recordHolds: false`).
 *
 * The same script undoes a resume that did not win a quorum, from the fresh token back to the
 * exported one, with tombstoneMs > 0: where it finds no fresh token (the resume's reply timed
 * out and it has not run yet) it leaves the cancel marker of the fresh token, which refuses
 * the resume when it arrives (a resume has tombstoneMs 0 and checks that marker). KEYS cancel
 * is the fresh token's marker either way.
 * Reply: 1 = moved, 0 = the hold is not `from`'s there (or the resume was cancelled).
 */

const moveRecord = `
local function move_record(key, from, to, ms)
  local record = redis.call('HGET', key, from)
  if not record then return end
  redis.call('HDEL', key, from)
  redis.call('HSET', key, to, record)
  keep_for(key, ms)
end`;

/**
 * Mutex or writer (a string key holding the token).
 * KEYS: lock, fence, holds, cancel. ARGV: from, to, leaseMs, floor, tombstoneMs.
 */
export const rotateString: LuaScript = luaScript(
  'rotate-string',
  `${prelude('raise_fence', 'record_hold')}${moveRecord}
raise_fence(KEYS[2], ARGV[4])
local tombstone = tonumber(ARGV[5])
if tombstone == 0 and redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  move_record(KEYS[3], ARGV[1], ARGV[2], ARGV[3])
  if ARGV[4] ~= '' then set_record_fence(KEYS[3], ARGV[2], ARGV[4]) end
  return 1
end
if tombstone > 0 then redis.call('SET', KEYS[4], '1', 'PX', tombstone) end
return 0
`,
);

/**
 * Reader or semaphore hold of n permits (members token, token#2 … token#n; its inspection
 * record is the token's alone). An expired hold is dropped, as extend does.
 * KEYS: holders, fence, holds, cancel. ARGV: from, to, leaseMs, floor, tombstoneMs, permits.
 */
export const rotateMember: LuaScript = luaScript(
  'rotate-member',
  `${prelude('raise_fence', 'server_now', 'expire_at_latest', 'record_hold')}${moveRecord}
raise_fence(KEYS[2], ARGV[4])
local tombstone = tonumber(ARGV[5])
if tombstone == 0 and redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
local permits = tonumber(ARGV[6])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expiry then
  local now = server_now()
  redis.call('ZREM', KEYS[1], ARGV[1])
  for i = 2, permits do redis.call('ZREM', KEYS[1], ARGV[1] .. '#' .. i) end
  if tonumber(expiry) > now then
    local expires = now + tonumber(ARGV[3])
    redis.call('ZADD', KEYS[1], expires, ARGV[2])
    for i = 2, permits do redis.call('ZADD', KEYS[1], expires, ARGV[2] .. '#' .. i) end
    expire_at_latest(KEYS[1])
    move_record(KEYS[3], ARGV[1], ARGV[2], ARGV[3])
    if ARGV[4] ~= '' then set_record_fence(KEYS[3], ARGV[2], ARGV[4]) end
    return 1
  end
  redis.call('HDEL', KEYS[3], ARGV[1])
  return 0
end
if tombstone > 0 then redis.call('SET', KEYS[4], '1', 'PX', tombstone) end
return 0
`,
);
