--[[ lock/force-unlock: delete the lock whoever holds it, and hand it over like lock/release.
Safe to repeat: a marker named by the call remembers that it deleted the lock.
KEYS[1]  lock hash (see lock/acquire for the keys named after it); the marker is
         <KEYS[1]>:released:force:<call id>
ARGV[1]  the call's id
ARGV[2]  how long the marker is kept, in ms
Returns  1 when a lock was deleted, 0 when there was none ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/lock-hand-over.lua
local marker = KEYS[1] .. ':released:force:' .. ARGV[1]
if redis.call('exists', marker) == 1 then
  return 1
end
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('set', marker, '1', 'px', ARGV[2])
handOver()
return 1
