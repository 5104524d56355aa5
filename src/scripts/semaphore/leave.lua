--[[ semaphore/leave: remove a waiter that gave up (abort, waitTime elapsed, error) from the queue
at once; if it was the head, its reservation is lifted and free permits are announced.
KEYS[1]  permits: string, the available count
KEYS[2]  queue: zset, waiter id -> arrival
KEYS[3]  wants: hash, waiter id -> "<permits>:<expires at>"
ARGV[1]  waiter id
ARGV[2]  channel
Returns  1 when the waiter was queued, 0 otherwise ]]
local wasHead = redis.call('zrange', KEYS[2], 0, 0)[1] == ARGV[1]
redis.call('hdel', KEYS[3], ARGV[1])
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local avail = tonumber(redis.call('get', KEYS[1]) or '0')
if wasHead and avail > 0 and redis.call('exists', KEYS[2]) == 1 then
  redis.call('publish', ARGV[2], tostring(avail))
end
return 1
