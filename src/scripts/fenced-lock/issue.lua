--[[ fenced-lock/issue: give the current holder of the lock its fencing token. Runs right after the
owner acquired the lock (through the lock's own queue and hand-over) and only while it still holds
it, so tokens follow the order of holds: each is drawn from a counter that outlives the lock key,
during a hold that no other hold overlaps. A re-entering owner keeps the token it has.
Safe to repeat: the token is kept in the lock hash; a repeat returns it.
KEYS[1]  lock hash: field = owner id -> hold count, plus field "token" = the holder's token
KEYS[2]  token counter of the lock's hash slot (no TTL: tokens keep increasing after the lock key
         expired; every name of the slot draws from it, so it is at most one key per slot)
KEYS[3]  the per-name counter of earlier versions: if present, the slot's counter is raised to it
         and it is deleted, so that tokens never go back
ARGV[1]  owner id ("<client id>:<owner id>")
Returns  the token as a decimal string; nil when the owner does not hold the lock (any more) ]]
--!include lib/settled-slot.lua
existsInSettledSlot()
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local token = redis.call('hget', KEYS[1], 'token')
if not token then
  local legacy = redis.call('get', KEYS[3])
  if legacy then
    -- Compared as numbers only below 2^53; past that the legacy counter is taken as it is.
    local current = redis.call('get', KEYS[2])
    if not current or tonumber(legacy) > tonumber(current) then
      redis.call('set', KEYS[2], legacy)
    end
    redis.call('del', KEYS[3])
  end
  -- Read back as a string: INCR's reply becomes a Lua double, exact only up to 2^53.
  redis.call('incr', KEYS[2])
  token = redis.call('get', KEYS[2])
  redis.call('hset', KEYS[1], 'token', token)
end
return token
