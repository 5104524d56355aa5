--[[ count-down-latch/try-set-count: set the count, only when no latch is set. A count of 0 stores
nothing: a latch at 0 and a latch never set are the same thing.
Safe to repeat: the call's marker keeps its outcome (lib/once).
KEYS[1]  latch count (a string integer, kept without TTL until it reaches 0 or is deleted)
KEYS[2]  this call's marker
ARGV[1]  count (integer >= 0)
ARGV[2]  how long the marker is kept, in ms
Returns  1 when set (or 0 asked for and no latch is set), 0 when a latch was already set ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
if redis.call('exists', KEYS[1]) == 1 then
  return remember(0)
end
if tonumber(ARGV[1]) > 0 then
  redis.call('set', KEYS[1], ARGV[1])
end
return remember(1)
