--[[ permit-expirable-semaphore/release: return the permit with the given id to the pool.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel: wakes one waiter
ARGV[2]  permit id
Returns  1 when released, 0 when no such permit is out (unknown, released, or its lease ran out) ]]
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
if redis.call('zrem', KEYS[2], ARGV[2]) == 0 then
  return 0
end
keepLeasesUntilLastExpiry()
redis.call('publish', ARGV[1], '1')
return 1
