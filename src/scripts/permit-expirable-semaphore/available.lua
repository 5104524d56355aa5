--[[ permit-expirable-semaphore/available: the number of permits free now.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel
Returns  total minus the permits out whose lease has not run out ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Permits whose lease ran out are back in the pool; tell waiters.
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if expired > 0 then
  redis.call('publish', ARGV[1], tostring(expired))
end
return tonumber(redis.call('get', KEYS[1]) or '0') - redis.call('zcard', KEYS[2])
