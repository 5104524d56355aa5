--[[ permit-expirable-semaphore/add-permits: set the total once (trySetPermits), or change it.
Safe to repeat: the call's marker keeps its outcome (lib/once).
KEYS[1]  total: string, the number of permits (no TTL)
KEYS[2]  this call's marker
ARGV[1]  channel: wakes one waiter per permit added
ARGV[2]  permits (integer; >= 0 when setting, may be negative when adding)
ARGV[3]  "set": only if never set; "add": add to the total
ARGV[4]  how long the marker is kept, in ms
Returns  1 when changed, 0 when "set" found a total already there ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
local n = tonumber(ARGV[2])
if ARGV[3] == 'set' then
  if redis.call('setnx', KEYS[1], n) == 0 then
    return remember(0)
  end
else
  redis.call('incrby', KEYS[1], n)
end
if n > 0 then
  redis.call('spublish', ARGV[1], tostring(n))
end
return remember(1)
