--[[ permit-expirable-semaphore/release: return the permit with the given id to the pool.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel: wakes one waiter
ARGV[2]  permit id
Returns  1 when released, 0 when no such permit is out (unknown, released, or its lease ran out) ]]
--!include lib/expirable-leases.lua
if redis.call('zrem', KEYS[2], ARGV[2]) == 0 then
  return 0
end
keepLeasesUntilLastExpiry()
redis.call('publish', ARGV[1], '1')
return 1
