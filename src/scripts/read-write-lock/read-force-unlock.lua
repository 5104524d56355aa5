--[[ read-write-lock/read-force-unlock: drop every reader, whoever they are, and wake one writer.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  channel waiting writers listen on
Returns  1 when a live reader was dropped, 0 when there was none ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = redis.call('hgetall', KEYS[2])
local live = 0
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 't:' and tonumber(fields[i + 1]) > now then
    live = 1
  end
end
redis.call('del', KEYS[2])
if live == 1 and redis.call('exists', KEYS[1]) == 0 then
  redis.call('publish', ARGV[1], '1')
end
return live
