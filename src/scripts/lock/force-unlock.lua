--[[ lock/force-unlock: delete the lock whoever holds it, and hand it over like lock/release.
Safe to repeat: a marker named by the call remembers that it deleted the lock.
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
KEYS[4]  marker of this call
ARGV[1]  hand-over channel prefix (hand-overs go to "<prefix>:<client id>")
ARGV[2]  how long the marker is kept, in ms
Returns  1 when a lock was deleted, 0 when there was none ]]
--!include lib/lock-hand-over.lua
if redis.call('exists', KEYS[4]) == 1 then
  return 1
end
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('set', KEYS[4], '1', 'px', ARGV[2])
handOver(ARGV[1])
return 1
