--[[ semaphore/drain: take every available permit at once.
KEYS[1]  permits: string, the available count (no TTL)
Returns  the number of permits taken (0 when none was available) ]]
local avail = tonumber(redis.call('get', KEYS[1]) or '0')
if avail <= 0 then
  return 0
end
redis.call('decrby', KEYS[1], avail)
return avail
