--[[ read-write-lock/read-release: give back one read hold (or, to give up an acquisition, all of
them). When no live reader is left and no writer holds the lock, the read hash is deleted and one
waiting writer is woken.
Safe to repeat: the caller says how many read holds it has, so a repeat finds fewer and answers
what the first run did; after the last hold a short-lived marker naming the hold remembers the
release (as lock/release).
KEYS[1]  write hash
KEYS[2]  read hash ("n:<owner>" = holds, "t:<owner>" = lease end in ms, Redis clock)
KEYS[3]  release marker of this owner
ARGV[1]  owner id
ARGV[2]  channel waiting writers listen on
ARGV[3]  the owner's read holds as the caller knows them, or "all"
ARGV[4]  how long the marker is kept, in ms
ARGV[5]  the hold's id (the marker's value)
Returns  -1 when the owner holds no live read hold; otherwise its read holds left ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
local now = serverNow()
local expiry = tonumber(redis.call('hget', KEYS[2], 't:' .. ARGV[1]) or '0')
if expiry <= now then
  if redis.call('get', KEYS[3]) == ARGV[5] then
    return 0
  end
  return -1
end
local holds = tonumber(redis.call('hget', KEYS[2], 'n:' .. ARGV[1]) or '0')
local left = 0
if ARGV[3] ~= 'all' then
  if holds < tonumber(ARGV[3]) then
    return holds
  end
  left = redis.call('hincrby', KEYS[2], 'n:' .. ARGV[1], -1)
end
if left <= 0 then
  redis.call('hdel', KEYS[2], 'n:' .. ARGV[1], 't:' .. ARGV[1])
  redis.call('set', KEYS[3], ARGV[5], 'px', ARGV[4])
end
-- Drop expired readers; the key lives as long as the latest reader left, so nobody's lease is cut.
local latest = pruneReaders(KEYS[2], now)
if latest > 0 then
  redis.call('pexpire', KEYS[2], latest - now)
else
  redis.call('del', KEYS[2])
  if redis.call('exists', KEYS[1]) == 0 then
    redis.call('spublish', ARGV[2], '1')
  end
end
return left
