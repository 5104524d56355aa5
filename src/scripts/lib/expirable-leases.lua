-- lib/expirable-leases: included first by every permit-expirable-semaphore script.
-- Sets `now` (server clock, ms), returns permits whose lease ran out to the pool (KEYS[2] is the
-- leases zset) and tells waiters on ARGV[1]; keepLeasesUntilLastExpiry() makes the leases key
-- live as long as its longest lease (forever while a permit without lease is out).
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if expired > 0 then
  redis.call('spublish', ARGV[1], tostring(expired))
end
local function keepLeasesUntilLastExpiry()
  local last = redis.call('zrange', KEYS[2], -1, -1, 'WITHSCORES')
  if last[2] == nil then return end
  if last[2] == 'inf' then
    redis.call('persist', KEYS[2])
  else
    redis.call('pexpireat', KEYS[2], math.ceil(tonumber(last[2])))
  end
end
