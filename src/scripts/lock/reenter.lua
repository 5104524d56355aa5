--[[ lock/reenter: an owner that holds the lock takes one more hold (a nested acquisition).
The lease is extended to ARGV[3] but never shortened: the outer hold still counts on it.
Safe to repeat: the caller says how many holds it has, so a repeat finds one more and adds none.
KEYS[1]  lock hash
ARGV[1]  owner id
ARGV[2]  the owner's holds as the caller knows them (before this one)
ARGV[3]  lease in ms
Returns  1 when the owner holds the lock (one more now), nil when it holds none any more ]]
--!include lib/settled-slot.lua
assertSettledSlot()
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not holds then
  return nil
end
if holds <= tonumber(ARGV[2]) then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('pexpire', KEYS[1], ARGV[3])
end
return 1
