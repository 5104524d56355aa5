--[[ read-write-lock/read-acquire: take a read hold, or re-enter one. Readers share; a writer
excludes them, except that the write holder itself may read (downgrade).
KEYS[1]  write hash: field = owner id, value = write hold count (expires with the write lease)
KEYS[2]  read hash: "n:<owner>" = read hold count, "t:<owner>" = that reader's expiry (ms, Redis
         clock); the key itself expires with the latest reader
ARGV[1]  owner id
ARGV[2]  lease in ms (this reader's own: other readers' leases are untouched)
Returns  nil when acquired; otherwise the write holder's remaining TTL in ms ]]
--!include lib/rw-readers.lua
if redis.call('exists', KEYS[1]) == 1 and redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  -- PTTL says 0 in the last millisecond before expiry; 1 makes the waiter retry then, not much later.
  local ttl = redis.call('pttl', KEYS[1])
  return ttl == 0 and 1 or ttl
end
local now = serverNow()
-- Drop readers whose lease ran out (this owner's stale holds too, so they are not counted on).
local own = 't:' .. ARGV[1]
local latest = math.max(now + tonumber(ARGV[2]), pruneReaders(KEYS[2], now, own))
redis.call('hincrby', KEYS[2], 'n:' .. ARGV[1], 1)
redis.call('hset', KEYS[2], own, now + tonumber(ARGV[2]))
-- The key lives as long as the latest reader, so no reader's lease is cut by another's.
redis.call('pexpire', KEYS[2], latest - now)
return nil
