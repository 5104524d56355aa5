--[[ lock/release: give back one of the owner's holds; the last one frees the lock and hands it over
(see lib/lock-hand-over) when someone queued for it while it was held.
Safe to repeat: the caller says how many holds it has, so a repeat (its reply was lost) finds
fewer and answers what the first run did; the last release renames the lock hash to a marker
named by the owner and the hold, which a repeat finds and reports instead of "not held". The
marker keeps the lease the lock had left, or is given ARGV[3] when the caller says that is too
short or too long. Naming the hold, it tells a later hold of the same owner (inside one scope)
that is lost from the released one.
An owner that holds nothing (its hold expired or was deleted) still passes a lock that is free on
to the first live waiter: a lock freed without a release told nobody.
KEYS[1]  lock hash (see lock/acquire for the keys named after it); the marker is
         <KEYS[1]>:released:<owner id>:<hold id>
ARGV[1]  owner id
ARGV[2]  the owner's holds as the caller knows them (before this release)
ARGV[3]  how long the marker must be kept, in ms, or "" when the lease the lock has left will do
ARGV[4]  the hold's id
Returns  -1 when the owner holds nothing; otherwise the holds left (0: freed or handed over) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/lock-hand-over.lua
local state = redis.call('hmget', KEYS[1], ARGV[1], 'queued')
local holds = tonumber(state[1])
local marker = KEYS[1] .. ':released:' .. ARGV[1] .. ':' .. ARGV[4]
if not holds then
  if redis.call('exists', KEYS[1]) == 0 then
    handOver()
  end
  if redis.call('exists', marker) == 1 then
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
redis.call('rename', KEYS[1], marker)
if ARGV[3] ~= '' then
  redis.call('pexpire', marker, ARGV[3])
end
if state[2] then
  handOver()
end
return 0
