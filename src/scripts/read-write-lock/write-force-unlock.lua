--[[ read-write-lock/write-force-unlock: delete the write lock whoever holds it; wake every waiting
reader, and one waiting writer when no reader holds the lock.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  channel waiting readers listen on
ARGV[2]  channel waiting writers listen on
Returns  1 when a write lock was deleted, 0 when there was none ]]
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('publish', ARGV[1], '*')
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = redis.call('hgetall', KEYS[2])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 't:' and tonumber(fields[i + 1]) > now then
    return 1
  end
end
redis.call('publish', ARGV[2], '1')
return 1
