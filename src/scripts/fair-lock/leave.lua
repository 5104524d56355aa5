--[[ fair-lock/leave: remove an owner's place in the queue (abort, waitTime elapsed). When it was
next in line for a free lock, the turn passes on at once instead of after its place would lapse.
KEYS[1]  lock hash
KEYS[2]  queue list
KEYS[3]  timeouts hash
ARGV[1]  owner id
ARGV[2]  channel to publish on when the next waiter may take the lock
Returns  1 when the owner had a place, 0 otherwise ]]
if redis.call('hdel', KEYS[3], ARGV[1]) == 0 then
  return 0
end
local head = redis.call('lindex', KEYS[2], 0)
redis.call('lrem', KEYS[2], 1, ARGV[1])
if head == ARGV[1] and redis.call('exists', KEYS[1]) == 0 and redis.call('llen', KEYS[2]) > 0 then
  redis.call('publish', ARGV[2], '1')
end
return 1
