--[[ semaphore/available: read the available count (read-only).
KEYS[1]  permits: string, the available count
Returns  the count (0 when never set; negative after addPermits took more than were free) ]]
return tonumber(redis.call('get', KEYS[1]) or '0')
