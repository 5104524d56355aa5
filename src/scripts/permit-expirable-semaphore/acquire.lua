--[[ permit-expirable-semaphore/acquire: take one permit under the given id, with or without a lease.
Available = total - permits out; a permit whose lease ran out is no longer counted as out.
Safe to repeat: a permit already out under this id is this very call run again.
KEYS[1]  total: string, the number of permits (no TTL: it is the semaphore's state)
KEYS[2]  leases: zset, permit id -> lease end (server ms, "inf" without lease); expires with its
         last lease
ARGV[1]  channel
ARGV[2]  permit id (random, unguessable; one per acquisition)
ARGV[3]  lease in ms, or "" for a permit held until released
Returns  nil when acquired; otherwise ms until the next lease runs out, or -1 when none will ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/expirable-leases.lua
if redis.call('zscore', KEYS[2], ARGV[2]) then
  return nil
end
local total = tonumber(redis.call('get', KEYS[1]) or '0')
if total - redis.call('zcard', KEYS[2]) >= 1 then
  local expiry = ARGV[3] == '' and 'inf' or (now + tonumber(ARGV[3]))
  redis.call('zadd', KEYS[2], 'NX', expiry, ARGV[2])
  keepLeasesUntilLastExpiry()
  return nil
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] == nil or first[2] == 'inf' then
  return -1
end
return math.max(1, math.ceil(tonumber(first[2]) - now))
