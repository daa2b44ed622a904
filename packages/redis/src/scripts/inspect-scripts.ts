import { type LuaScript, luaScript, prelude } from './lua-script.js';

/*
 * `lock.inspect()` and `lock.forceRelease()` on one node. ARGV family says where a lock's
 * holds are: 'mutex' (KEYS[2] is the token string), 'semaphore' (KEYS[2] is the holders'
 * sorted set, scored by expiry in server ms) or 'rw' (KEYS[2] the writer's string, KEYS[3]
 * the readers' sorted set). KEYS[1] is always the inspection records' hash (hold token →
 * '<fence>:<since>:<owner>', absent for holds made by clients that did not write one).
 * A semaphore hold of n permits is the members token, token#2 … token#n (see acquireSemaphore):
 * one hold of n permits here, under its token (hold tokens are UUIDs: no '#').
 */

const liveHolds = `
local function live_holds(family)
  local holds = {}
  if family ~= 'semaphore' then
    local token = redis.call('GET', KEYS[2])
    if token then
      local kind = 'mutex'
      if family == 'rw' then kind = 'write' end
      holds[#holds + 1] = { kind, token, redis.call('PTTL', KEYS[2]), 1 }
    end
  end
  if family ~= 'mutex' then
    local set = KEYS[2]
    local kind = 'semaphore'
    if family == 'rw' then set = KEYS[3]; kind = 'read' end
    local now = server_now()
    local members = redis.call('ZRANGEBYSCORE', set, '(' .. now, '+inf', 'WITHSCORES')
    local at = {}
    for i = 1, #members, 2 do
      local token = string.match(members[i], '^(.*)#%d+$') or members[i]
      local hold = at[token]
      if hold then
        hold[4] = hold[4] + 1
      else
        hold = { kind, token, tonumber(members[i + 1]) - now, 1 }
        at[token] = hold
        holds[#holds + 1] = hold
      end
    end
  end
  return holds
end`;

/**
 * Reads the live holds. Reply: a flat array, five entries per hold: kind, hold token, ms
 * left of its lease (server clock), permits, inspection record ('' when none). Changes nothing.
 * KEYS: holds, lock or holders[, readers]. ARGV: family.
 */
export const inspectHolds: LuaScript = luaScript(
  'inspect-holds',
  `${prelude('server_now')}${liveHolds}
local reply = {}
for _, hold in ipairs(live_holds(ARGV[1])) do
  reply[#reply + 1] = hold[1]
  reply[#reply + 1] = hold[2]
  reply[#reply + 1] = hold[3]
  reply[#reply + 1] = hold[4]
  reply[#reply + 1] = redis.call('HGET', KEYS[1], hold[2]) or ''
end
return reply
`,
);

/**
 * The operator's break: deletes every hold of the lock and the inspection records, leaves the
 * fencing counter, the waiters, the waiting writers' markers and the reservations alone, and
 * (if anything was held) wakes every waiter ('!' for a semaphore: every waiter of every
 * provider, see release-subscriber.ts). Reply: the hold tokens of the live holds it broke (a
 * hold of n permits once).
 * KEYS: holds, lock or holders[, readers]. ARGV: family, channel, publish.
 */
export const breakHolds: LuaScript = luaScript(
  'break-holds',
  `${prelude('server_now')}${liveHolds}
local broken = {}
for _, hold in ipairs(live_holds(ARGV[1])) do broken[#broken + 1] = hold[2] end
redis.call('DEL', KEYS[1], KEYS[2])
if KEYS[3] then redis.call('DEL', KEYS[3]) end
-- '!' wakes every waiter of a semaphore's providers: the freed permits may let several in.
local wake = '*'
if ARGV[1] == 'semaphore' then wake = '!' end
if #broken > 0 then redis.call(ARGV[3], ARGV[2], wake) end
return broken
`,
);
