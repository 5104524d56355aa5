--[[ lock/release: give back one of the owner's holds; the last one frees the lock and hands it over
(see lib/lock-hand-over).
Safe to repeat: the caller says how many holds it has, so a repeat (its reply was lost) finds
fewer and answers what the first run did; after the last hold a short-lived marker remembers the
release, so a repeat reports it instead of "not held". The marker names the hold: a later hold of
the same owner (inside one scope) that is lost is reported lost, not taken for the released one.
An owner that holds nothing (its hold expired or was deleted) still passes a lock that is free on
to the first live waiter: a lock freed without a release told nobody.
KEYS[1]  lock hash (see lock/acquire for the keys named after it); the marker is
         <KEYS[1]>:released:<owner id>
ARGV[1]  owner id
ARGV[2]  the owner's holds as the caller knows them (before this release)
ARGV[3]  how long the marker is kept, in ms
ARGV[4]  the hold's id (the marker's value)
Returns  -1 when the owner holds nothing; otherwise the holds left (0: freed or handed over) ]]
--!include lib/settled-slot.lua
existsInSettledSlot()
--!include lib/lock-hand-over.lua
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
local marker = KEYS[1] .. ':released:' .. ARGV[1]
if not holds then
  if redis.call('exists', KEYS[1]) == 0 then
    handOver()
  end
  if redis.call('get', marker) == ARGV[4] then
    return 0
  end
  return -1
end
if holds < tonumber(ARGV[2]) then
  return holds
end
if holds > 1 then
  return redis.call('hincrby', KEYS[1], ARGV[1], -1)
end
redis.call('del', KEYS[1])
redis.call('set', marker, ARGV[4], 'px', ARGV[3])
handOver()
return 0
