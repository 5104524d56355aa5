--[[ count-down-latch/count-down: decrement the count; reaching 0 deletes the latch and wakes every
waiter. Counting down a latch that is not set does nothing.
Safe to repeat: the call's marker keeps its outcome (lib/once), so a repeat counts nothing.
KEYS[1]  latch count
KEYS[2]  this call's marker
ARGV[1]  channel waiters listen on
ARGV[2]  how long the marker is kept, in ms
Returns  the count left (0 when it reached 0 or no latch was set) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
local left = redis.call('decr', KEYS[1])
if left > 0 then
  return remember(left)
end
redis.call('del', KEYS[1])
redis.call('spublish', ARGV[1], '*')
return remember(0)
