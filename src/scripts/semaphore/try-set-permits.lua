--[[ semaphore/try-set-permits: set the number of permits, only if it was never set.
KEYS[1]  permits: string, the available count (no TTL)
ARGV[1]  permits (integer >= 0)
ARGV[2]  channel: wakes one waiter per permit set
Returns  1 when set, 0 when the semaphore already had a count ]]
if redis.call('setnx', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if tonumber(ARGV[1]) > 0 then
  redis.call('publish', ARGV[2], ARGV[1])
end
return 1
