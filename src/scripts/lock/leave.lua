--[[ lock/leave: an acquisition gives up (its wait timed out, was aborted, or failed): its place in
the queue goes, and whatever it may hold is given back and handed over, as lock/release does: a
hand-over it never took, or an attempt whose reply was lost but that took the lock. A lock that
is free (it expired or was deleted behind its holder, which told nobody) is passed on too.
Safe to repeat: a second run finds nothing.
KEYS[1]  lock hash (see lock/acquire for the keys named after it)
ARGV[1]  owner id
Returns  1 when the owner held the lock and it was passed on, 0 otherwise ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/lock-hand-over.lua
if redis.call('hdel', KEYS[1] .. ':waiters', ARGV[1]) == 1 then
  redis.call('lrem', KEYS[1] .. ':queue', 0, ARGV[1])
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  if redis.call('exists', KEYS[1]) == 0 then
    handOver()
  end
  return 0
end
redis.call('del', KEYS[1])
handOver()
return 1
