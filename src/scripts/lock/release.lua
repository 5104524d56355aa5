--[[ lock/release: give back one hold; the last hold deletes the lock and wakes one waiter.
KEYS[1]  lock hash
ARGV[1]  owner id
ARGV[2]  channel to publish on when the lock is freed
Returns  -1 when the owner holds nothing; otherwise the holds left (0: the lock is free) ]]
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if left > 0 then
  return left
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[2], '1')
return 0
