--[[ lock/release-all: drop every hold of one owner at once. Used to undo an acquire whose reply
was lost (timeout), when the owner held nothing before it.
KEYS[1]  lock hash
ARGV[1]  owner id
ARGV[2]  channel to publish on when the lock is freed
Returns  1 when the owner held the lock (now freed), 0 otherwise ]]
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[2], '1')
return 1
