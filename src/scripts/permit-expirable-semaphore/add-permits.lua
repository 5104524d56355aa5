--[[ permit-expirable-semaphore/add-permits: set the total once (trySetPermits), or change it.
KEYS[1]  total: string, the number of permits (no TTL)
ARGV[1]  channel: wakes one waiter per permit added
ARGV[2]  permits (integer; >= 0 when setting, may be negative when adding)
ARGV[3]  "set": only if never set; "add": add to the total
Returns  1 when changed, 0 when "set" found a total already there ]]
local n = tonumber(ARGV[2])
if ARGV[3] == 'set' then
  if redis.call('setnx', KEYS[1], n) == 0 then
    return 0
  end
else
  redis.call('incrby', KEYS[1], n)
end
if n > 0 then
  redis.call('publish', ARGV[1], tostring(n))
end
return 1
