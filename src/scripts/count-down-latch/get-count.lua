--[[ count-down-latch/get-count: read the count (no writes).
KEYS[1]  latch count
Returns  the count; 0 when no latch is set ]]
return tonumber(redis.call('get', KEYS[1]) or '0')
