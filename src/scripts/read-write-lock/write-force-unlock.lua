--[[ read-write-lock/write-force-unlock: delete the write lock whoever holds it; wake every waiting
reader, and one waiting writer when no reader holds the lock.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  channel waiting readers listen on
ARGV[2]  channel waiting writers listen on
Returns  1 when a write lock was deleted, 0 when there was none ]]
--!include lib/rw-readers.lua
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
wakeAfterWrite(KEYS[2], ARGV[1], ARGV[2])
return 1
