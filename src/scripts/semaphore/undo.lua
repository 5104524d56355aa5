--[[ semaphore/undo: give back the permits of an acquire call whose reply was lost (timeout), or,
if that call has not run yet, mark it cancelled so that it takes nothing when it does run.
KEYS[1]  permits: string, the available count
KEYS[2]  grants: zset, attempt id -> grant time (ms)
ARGV[1]  attempt id
ARGV[2]  permits that attempt asked for
ARGV[3]  channel
ARGV[4]  how long grants are remembered (ms)
Returns  1 when permits were given back, 0 when the attempt had taken nothing ]]
if redis.call('zrem', KEYS[2], ARGV[1]) == 1 then
  local avail = redis.call('incrby', KEYS[1], ARGV[2])
  if avail > 0 then
    redis.call('publish', ARGV[3], tostring(math.min(tonumber(ARGV[2]), avail)))
  end
  return 1
end
local t = redis.call('time')
redis.call('zadd', KEYS[2], tonumber(t[1]) * 1000, '!' .. ARGV[1])
redis.call('pexpire', KEYS[2], ARGV[4])
return 0
