--[[ read-write-lock/write-release: give back one write hold (or, to give up an acquisition, all of
them). The last one frees the write lock: every waiting reader is woken, and one waiting writer
when no reader is left (the holder may still read after a downgrade).
Safe to repeat: as lock/release (the caller's hold count, and a marker naming the hold after the
last one).
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = lease end in ms, Redis clock)
KEYS[3]  release marker of this owner
ARGV[1]  owner id
ARGV[2]  channel waiting readers listen on
ARGV[3]  channel waiting writers listen on
ARGV[4]  the owner's write holds as the caller knows them, or "all"
ARGV[5]  how long the marker is kept, in ms
ARGV[6]  the hold's id (the marker's value)
Returns  -1 when the owner holds no write hold; otherwise its write holds left (0: freed) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if not holds then
  if redis.call('get', KEYS[3]) == ARGV[6] then
    return 0
  end
  return -1
end
if ARGV[4] ~= 'all' then
  if holds < tonumber(ARGV[4]) then
    return holds
  end
  if holds > 1 then
    return redis.call('hincrby', KEYS[1], ARGV[1], -1)
  end
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[3], ARGV[6], 'px', ARGV[5])
wakeAfterWrite(KEYS[2], ARGV[2], ARGV[3])
return 0
