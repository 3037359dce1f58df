/**
 * The Redis ledger's Lua scripts (redis.ts): each change of an authorization's state is one of
 * them, so it is atomic across every instance sharing the Redis. Part of your project: edit freely.
 */
// state: "pending:<token>" (reserved, with the lease as TTL), "settled" (spent, TTL = ttlMs),
// "held" (an unsettled answer waits for an identical retry, TTL = the authorization's life) or
// "claimed:<token>:<lease end, ms>" (one retry settles a held one; held again once the lease ends).
// A claim's lease is compared with the caller's clock (ARGV), the same on every instance within
// the usual clock skew.
const CLAIM_EXPIRED = `
local function claimExpired(v, now)
  local lease = string.match(v, '^claimed:[^:]*:(%d+)$')
  return lease ~= nil and tonumber(lease) <= tonumber(now)
end`;

export const SCRIPTS = {
  ledgerReserve: {
    numberOfKeys: 1,
    lua: `${CLAIM_EXPIRED}
local v = redis.call('GET', KEYS[1])
if v == false then
  redis.call('SET', KEYS[1], 'pending:' .. ARGV[1], 'PX', ARGV[2])
  return 'reserved'
end
if v == 'settled' then return 'settled' end
if v == 'held' or claimExpired(v, ARGV[3]) then return 'held' end
return 'in-flight'`,
  },
  // held, or a claim whose lease ended -> claimed by ARGV[1] until ARGV[2] + ARGV[3]; TTL kept.
  ledgerClaimHeld: {
    numberOfKeys: 1,
    lua: `${CLAIM_EXPIRED}
local v = redis.call('GET', KEYS[1])
if v == false or v == 'settled' then return 'settled' end
if v == 'held' or claimExpired(v, ARGV[2]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl <= 0 then return 'settled' end
  local lease = tonumber(ARGV[2]) + tonumber(ARGV[3])
  redis.call('SET', KEYS[1], 'claimed:' .. ARGV[1] .. ':' .. string.format('%d', lease), 'PX', ttl)
  return 'reserved'
end
return 'in-flight'`,
  },
  ledgerReturnHeld: {
    numberOfKeys: 1,
    lua: `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 9 + #ARGV[1]) == 'claimed:' .. ARGV[1] .. ':' then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('SET', KEYS[1], 'held', 'PX', ttl) end
end
return 0`,
  },
  ledgerHold: {
    numberOfKeys: 2,
    lua: `
redis.call('SET', KEYS[1], 'held', 'PX', ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1])
return 1`,
  },
  ledgerRenew: {
    numberOfKeys: 1,
    lua: `
if redis.call('GET', KEYS[1]) == 'pending:' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`,
  },
  ledgerRelease: {
    numberOfKeys: 1,
    lua: `
if redis.call('GET', KEYS[1]) == 'pending:' .. ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`,
  },
  // KEYS[2] (the result) is optional: the caller passes the number of keys.
  ledgerSettle: {
    lua: `
redis.call('SET', KEYS[1], 'settled', 'PX', ARGV[1])
if KEYS[2] then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1]) end
return 1`,
  },
  // The list of unconfirmed settlements (one sorted set, scored by time): its own hash slot.
  ledgerListUnconfirmed: {
    numberOfKeys: 1,
    lua: `return redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)`,
  },
  ledgerAddUnconfirmed: {
    numberOfKeys: 1,
    lua: `return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])`,
  },
  ledgerForgetUnconfirmed: {
    numberOfKeys: 1,
    lua: `return redis.call('ZREM', KEYS[1], ARGV[1])`,
  },
  // A claim (claimRecord): kept unless one is there; answers the one there, or false when kept.
  ledgerClaimRecord: {
    numberOfKeys: 1,
    lua: `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`,
  },
  ledgerUnlock: {
    numberOfKeys: 1,
    lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`,
  },
} as const;
