--[[ read-write-lock/read-acquire: take a read hold, or one more (re-entry). Readers share; a writer
excludes them, except that the write holder itself may read (downgrade).
Safe to repeat: the caller says how many read holds it has, so a repeat finds one more and adds none.
KEYS[1]  write hash: field = owner id, value = write hold count (expires with the write lease)
KEYS[2]  read hash: "n:<owner>" = read hold count, "t:<owner>" = that reader's lease end (ms,
         Redis clock); the key itself expires with the latest reader
ARGV[1]  owner id
ARGV[2]  lease in ms (this reader's own: other readers' leases are untouched; never shortened)
ARGV[3]  the owner's read holds as the caller knows them (0: a new reader)
Returns  nil when acquired; -3 when a re-entering owner holds no read hold any more; otherwise
         the write holder's remaining TTL in ms ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
if redis.call('exists', KEYS[1]) == 1 and redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  -- PTTL says 0 in the last millisecond before expiry; 1 makes the waiter retry then, not much later.
  local ttl = redis.call('pttl', KEYS[1])
  return ttl == 0 and 1 or ttl
end
local now = serverNow()
local own = 't:' .. ARGV[1]
-- Drop readers whose lease ran out (this owner's stale holds too, so they are not counted on).
local latest = pruneReaders(KEYS[2], now, own)
local holds = tonumber(redis.call('hget', KEYS[2], 'n:' .. ARGV[1]) or '0')
local known = tonumber(ARGV[3])
if known > 0 and holds == 0 then
  return -3
end
if holds <= known then
  redis.call('hincrby', KEYS[2], 'n:' .. ARGV[1], 1)
end
local expiry = math.max(now + tonumber(ARGV[2]), tonumber(redis.call('hget', KEYS[2], own) or '0'))
redis.call('hset', KEYS[2], own, expiry)
-- The key lives as long as the latest reader, so no reader's lease is cut by another's.
redis.call('pexpire', KEYS[2], math.max(latest, expiry) - now)
return nil
