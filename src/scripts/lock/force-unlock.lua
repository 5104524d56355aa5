--[[ lock/force-unlock: delete the lock whoever holds it, and hand it over like lock/release.
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
ARGV[1]  the lock's channel (hand-overs go to "<channel>:<client id>")
Returns  1 when a lock was deleted, 0 when there was none ]]
--!include lib/lock-hand-over.lua
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
handOver(ARGV[1])
return 1
