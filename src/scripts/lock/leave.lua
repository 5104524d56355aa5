--[[ lock/leave: a waiter gives up (timeout, abort): drop its place, and if a release had already
handed the lock to this very wait but it never took it, hand the lock on like lock/release.
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
ARGV[1]  owner id
ARGV[2]  the lock's channel (hand-overs go to "<channel>:<client id>")
ARGV[3]  the token of the wait that gives up
Returns  1 when an untaken hand-over was passed on, 0 otherwise ]]
--!include lib/lock-hand-over.lua
if redis.call('hdel', KEYS[3], ARGV[1]) == 1 then
  -- Still queued: nothing was handed to it.
  redis.call('lrem', KEYS[2], 0, ARGV[1])
  return 0
end
-- Handed over to this very wait (tokens are unique per client, so the owner must match too) and
-- never taken; a hand-over to another wait of this owner (one that took it) is a hold, not this
-- wait's to give.
if redis.call('hget', KEYS[1], 'handed-over') ~= ARGV[3] or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('del', KEYS[1])
handOver(ARGV[2])
return 1
