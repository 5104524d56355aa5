--[[ fenced-lock/issue: give the current holder of the lock its fencing token. Runs right after the
owner acquired the lock (through the lock's own queue and hand-over) and only while it still holds
it, so tokens follow the order of holds: each is drawn from a counter that outlives the lock key,
during a hold that no other hold overlaps. A re-entering owner keeps the token it has.
KEYS[1]  lock hash: field = owner id -> hold count, plus field "token" = the holder's token
KEYS[2]  token counter (no TTL: tokens must keep increasing after the lock key expired)
ARGV[1]  owner id ("<client id>:<owner id>")
Returns  the token as a decimal string; nil when the owner does not hold the lock (any more) ]]
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local token = redis.call('hget', KEYS[1], 'token')
if not token then
  -- Read back as a string: INCR's reply becomes a Lua double, exact only up to 2^53.
  redis.call('incr', KEYS[2])
  token = redis.call('get', KEYS[2])
  redis.call('hset', KEYS[1], 'token', token)
end
return token
