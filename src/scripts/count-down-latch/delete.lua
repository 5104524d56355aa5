--[[ count-down-latch/delete: delete the latch whatever its count and wake every waiter (they see
a count of 0, like Redisson's delete).
Safe to repeat: the call's marker keeps its outcome (lib/once).
KEYS[1]  latch count
KEYS[2]  this call's marker
ARGV[1]  channel waiters listen on
ARGV[2]  how long the marker is kept, in ms
Returns  1 when a latch was deleted, 0 when none was set ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('spublish', ARGV[1], '*')
return remember(1)
