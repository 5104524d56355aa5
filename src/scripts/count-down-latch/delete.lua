--[[ count-down-latch/delete: delete the latch whatever its count and wake every waiter (they see
a count of 0, like Redisson's delete).
KEYS[1]  latch count
ARGV[1]  channel waiters listen on
Returns  1 when a latch was deleted, 0 when none was set ]]
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call('publish', ARGV[1], '*')
return 1
