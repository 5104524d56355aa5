--[[ lock/force-unlock: delete the lock whoever holds it and wake one waiter.
KEYS[1]  lock hash
ARGV[1]  channel to publish on
Returns  1 when a lock was deleted, 0 when there was none ]]
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', ARGV[1], '1')
  return 1
end
return 0
