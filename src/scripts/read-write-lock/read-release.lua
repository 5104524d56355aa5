--[[ read-write-lock/read-release: give back one read hold (or all of them). When no live reader is
left and no writer holds the lock, the read hash is deleted and one waiting writer is woken.
KEYS[1]  write hash
KEYS[2]  read hash ("n:<owner>" = holds, "t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  owner id
ARGV[2]  channel waiting writers listen on
ARGV[3]  "1": drop every read hold of the owner (undo of a lost reply); "0": one hold
Returns  -1 when the owner holds no live read hold; otherwise its read holds left ]]
--!include lib/rw-readers.lua
local now = serverNow()
local expiry = tonumber(redis.call('hget', KEYS[2], 't:' .. ARGV[1]) or '0')
local left = -1
if expiry > now then
  left = 0
  if ARGV[3] ~= '1' then
    left = redis.call('hincrby', KEYS[2], 'n:' .. ARGV[1], -1)
  end
end
if left <= 0 then
  redis.call('hdel', KEYS[2], 'n:' .. ARGV[1], 't:' .. ARGV[1])
end
-- Drop expired readers; the key lives as long as the latest reader left, so nobody's lease is cut.
local latest = pruneReaders(KEYS[2], now)
if latest > 0 then
  redis.call('pexpire', KEYS[2], latest - now)
else
  redis.call('del', KEYS[2])
  if left >= 0 and redis.call('exists', KEYS[1]) == 0 then
    redis.call('publish', ARGV[2], '1')
  end
end
return left
