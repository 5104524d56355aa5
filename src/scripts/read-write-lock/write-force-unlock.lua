--[[ read-write-lock/write-force-unlock: delete the write lock whoever holds it; wake every waiting
reader, and one waiting writer when no reader holds the lock.
Safe to repeat: a marker named by the call remembers that it deleted the lock.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = lease end in ms, Redis clock)
KEYS[3]  marker of this call
ARGV[1]  channel waiting readers listen on
ARGV[2]  channel waiting writers listen on
ARGV[3]  how long the marker is kept, in ms
Returns  1 when a write lock was deleted, 0 when there was none ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
if redis.call('exists', KEYS[3]) == 1 then
  return 1
end
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('set', KEYS[3], '1', 'px', ARGV[3])
wakeAfterWrite(KEYS[2], ARGV[1], ARGV[2])
return 1
