-- lib/fence: included by the scripts that grant a FencedLock (KEYS[2] is its token counter).
-- issueToken(): the lock hash (KEYS[1]) is held by its owner right now; its holder's fencing token
-- is kept in the hash (field "token") and returned; a hold without one (just granted, or handed
-- over by a release) draws the next from the counter. Tokens follow the order of holds: each is
-- drawn during a hold that no other hold overlaps, from a counter that outlives the lock key (no
-- TTL; every name of a hash slot draws from the slot's one counter). Without KEYS[2] (a plain
-- lock) it returns nil.
local function issueToken()
  if not KEYS[2] then
    return nil
  end
  local token = redis.call('hget', KEYS[1], 'token')
  if token then
    return token
  end
  -- Read back as a string: INCR's reply becomes a Lua double, exact only up to 2^53.
  redis.call('incr', KEYS[2])
  token = redis.call('get', KEYS[2])
  redis.call('hset', KEYS[1], 'token', token)
  return token
end
