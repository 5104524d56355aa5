--[[ permit-expirable-semaphore/available: the number of permits free now.
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease expiry
ARGV[1]  channel
Returns  total minus the permits out whose lease has not run out ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/expirable-leases.lua
return tonumber(redis.call('get', KEYS[1]) or '0') - redis.call('zcard', KEYS[2])
