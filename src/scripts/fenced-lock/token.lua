--[[ fenced-lock/token: read the current holder's fencing token (no writes).
KEYS[1]  lock hash
Returns  the token as a decimal string, or nil when the lock is not held (or held without a token) ]]
return redis.call('hget', KEYS[1], 'token')
