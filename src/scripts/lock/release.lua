--[[ lock/release: give back one hold (or all of them); the last hold hands the lock over.
Hand-over: the first live waiter in the queue gets the lock at once (hold count 1, TTL its lease but
at most the reservation its place names, until it claims it) and is told by "=<token>" on its own client's channel
("<channel>:<client id>", so only that process wakes), which is its acquisition: no further round
trip, and no other process can take the lock in between.
With nobody queued (or only lapsed places) the lock is just deleted.
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
ARGV[1]  owner id
ARGV[2]  the lock's channel (hand-overs go to "<channel>:<client id>")
ARGV[3]  "all": drop every hold of the owner (undoing an acquire whose reply was lost); left out: one
Returns  -1 when the owner holds nothing; otherwise the holds left (0: freed or handed over) ]]
--!include lib/lock-hand-over.lua
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not holds then
  return -1
end
if ARGV[3] ~= 'all' and holds > 1 then
  return redis.call('hincrby', KEYS[1], ARGV[1], -1)
end
redis.call('del', KEYS[1])
-- With nobody queued that is one LPOP finding nothing: nobody to wake; a waiter about to queue
-- tries again after subscribing and finds the lock free.
handOver(ARGV[2])
return 0
