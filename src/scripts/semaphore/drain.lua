--[[ semaphore/drain: take every available permit at once.
Safe to repeat: the call's marker keeps its outcome (lib/once), so a repeat takes nothing more.
KEYS[1]  permits: string, the available count (no TTL)
KEYS[2]  this call's marker
ARGV[1]  how long the marker is kept, in ms
Returns  the number of permits taken (0 when none was available) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
local avail = tonumber(redis.call('get', KEYS[1]) or '0')
if avail <= 0 then
  return remember(0)
end
redis.call('decrby', KEYS[1], avail)
return remember(avail)
