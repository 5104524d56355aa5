--[[ count-down-latch/count-down: decrement the count; reaching 0 deletes the latch and wakes every
waiter. Counting down a latch that is not set does nothing.
KEYS[1]  latch count
ARGV[1]  channel waiters listen on
Returns  the count left (0 when it reached 0 or no latch was set) ]]
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
local left = redis.call('decr', KEYS[1])
if left > 0 then
  return left
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], '*')
return 0
