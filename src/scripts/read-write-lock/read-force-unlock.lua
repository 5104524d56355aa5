--[[ read-write-lock/read-force-unlock: drop every reader, whoever they are, and wake one writer.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  channel waiting writers listen on
Returns  1 when a live reader was dropped, 0 when there was none ]]
--!include lib/rw-readers.lua
local live = anyLiveReader(KEYS[2], serverNow()) and 1 or 0
redis.call('del', KEYS[2])
if live == 1 and redis.call('exists', KEYS[1]) == 0 then
  redis.call('publish', ARGV[1], '1')
end
return live
