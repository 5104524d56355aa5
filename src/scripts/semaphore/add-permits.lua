--[[ semaphore/add-permits: add (or, negative, remove) permits; used by release() and addPermits().
Any party may release: permits are not owned.
Safe to repeat: the call's marker keeps its outcome (lib/once), so a repeat adds nothing.
KEYS[1]  permits: string, the available count (no TTL)
KEYS[2]  this call's marker
ARGV[1]  permits to add (integer, may be negative)
ARGV[2]  channel: when permits were added and some are free, wakes one waiter per freed permit
ARGV[3]  how long the marker is kept, in ms
Returns  the available count afterwards ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/once.lua
local done = remembered()
if done then
  return done
end
local n = tonumber(ARGV[1])
local avail = redis.call('incrby', KEYS[1], n)
if n > 0 and avail > 0 then
  redis.call('spublish', ARGV[2], tostring(math.min(n, avail)))
end
return remember(avail)
