--[[ semaphore/try-set-permits: set the number of permits, only if it was never set.
Safe to repeat: the call's marker keeps its outcome (lib/once).
KEYS[1]  permits: string, the available count (no TTL)
KEYS[2]  this call's marker
ARGV[1]  permits (integer >= 0)
ARGV[2]  channel: wakes one waiter per permit set
ARGV[3]  how long the marker is kept, in ms
Returns  1 when set, 0 when the semaphore already had a count ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
if redis.call('setnx', KEYS[1], ARGV[1]) == 0 then
  return remember(0)
end
if tonumber(ARGV[1]) > 0 then
  redis.call('spublish', ARGV[2], ARGV[1])
end
return remember(1)
