--[[ permit-expirable-semaphore/update-lease: give a permit that is still out a new lease from now.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel
ARGV[2]  permit id
ARGV[3]  new lease in ms
Returns  1 when updated, 0 when no such permit is out ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Permits whose lease ran out are back in the pool; tell waiters.
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if expired > 0 then
  redis.call('publish', ARGV[1], tostring(expired))
end
-- The leases key lives as long as its longest lease (forever while an unleased permit is out).
local function keepLeasesUntilLastExpiry()
  local last = redis.call('zrange', KEYS[2], -1, -1, 'WITHSCORES')
  if last[2] == nil then return end
  if last[2] == 'inf' then
    redis.call('persist', KEYS[2])
  else
    redis.call('pexpireat', KEYS[2], math.ceil(tonumber(last[2])))
  end
end
if not redis.call('zscore', KEYS[2], ARGV[2]) then
  return 0
end
redis.call('zadd', KEYS[2], 'XX', now + tonumber(ARGV[3]), ARGV[2])
keepLeasesUntilLastExpiry()
return 1
