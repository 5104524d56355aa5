--[[ lock/release: give back one of the owner's holds; the last one frees the lock and hands it over
(see lib/lock-hand-over).
Safe to repeat: the caller says how many holds it has, so a repeat (its reply was lost) finds
fewer and answers what the first run did; after the last hold a short-lived marker remembers the
release, so a repeat reports it instead of "not held".
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
KEYS[4]  release marker of this owner
ARGV[1]  owner id
ARGV[2]  hand-over channel prefix (hand-overs go to "<prefix>:<client id>")
ARGV[3]  the owner's holds as the caller knows them (before this release)
ARGV[4]  how long the marker is kept, in ms
Returns  -1 when the owner holds nothing; otherwise the holds left (0: freed or handed over) ]]
--!include lib/lock-hand-over.lua
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not holds then
  if redis.call('exists', KEYS[4]) == 1 then
    return 0
  end
  return -1
end
if holds < tonumber(ARGV[3]) then
  return holds
end
if holds > 1 then
  return redis.call('hincrby', KEYS[1], ARGV[1], -1)
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[4], '1', 'px', ARGV[4])
handOver(ARGV[2])
return 0
