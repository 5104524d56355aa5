--[[ permit-expirable-semaphore/update-lease: give a permit that is still out a new lease from now.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel
ARGV[2]  permit id
ARGV[3]  new lease in ms
Returns  1 when updated, 0 when no such permit is out ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/expirable-leases.lua
if not redis.call('zscore', KEYS[2], ARGV[2]) then
  return 0
end
redis.call('zadd', KEYS[2], 'XX', now + tonumber(ARGV[3]), ARGV[2])
keepLeasesUntilLastExpiry()
return 1
