--[[ permit-expirable-semaphore/release: return the permit with the given id to the pool.
Safe to repeat: a short-lived marker of the call remembers the release, so a repeat reports it
(while a second release of the same permit by another call finds it gone).
KEYS[1]  total: string, the number of permits
KEYS[2]  leases: zset, permit id -> lease end
KEYS[3]  this call's marker
ARGV[1]  channel: wakes one waiter
ARGV[2]  permit id
ARGV[3]  how long the marker is kept, in ms
Returns  1 when released, 0 when no such permit is out (unknown, released, or its lease ran out) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/expirable-leases.lua
if redis.call('zrem', KEYS[2], ARGV[2]) == 0 then
  return redis.call('exists', KEYS[3])
end
redis.call('set', KEYS[3], '1', 'px', ARGV[3])
keepLeasesUntilLastExpiry()
redis.call('spublish', ARGV[1], '1')
return 1
