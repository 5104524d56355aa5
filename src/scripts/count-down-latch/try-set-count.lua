--[[ count-down-latch/try-set-count: set the count, only when no latch is set. A count of 0 stores
nothing: a latch at 0 and a latch never set are the same thing.
KEYS[1]  latch count (a string integer, kept without TTL until it reaches 0 or is deleted)
ARGV[1]  count (integer >= 0)
Returns  1 when set (or 0 asked for and no latch is set), 0 when a latch was already set ]]
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
if tonumber(ARGV[1]) > 0 then
  redis.call('set', KEYS[1], ARGV[1])
end
return 1
