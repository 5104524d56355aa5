--[[ fenced-lock/acquire: take the re-entrant lock and hand out a fencing token. A new holder gets
the next value of a counter that outlives the lock key; a re-entering owner keeps its token.
KEYS[1]  lock hash: field = owner id -> hold count, plus field "token" = the holder's token
KEYS[2]  token counter (no TTL: tokens must keep increasing after the lock key expired)
ARGV[1]  owner id ("<client id>:<owner id>")
ARGV[2]  lease in ms
Returns  { 1, token (decimal string) } when acquired or re-entered; { 0, holder's TTL in ms } otherwise ]]
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  local token = redis.call('hget', KEYS[1], 'token')
  if not token then
    -- Read back as a string: INCR's reply becomes a Lua double, exact only up to 2^53.
    redis.call('incr', KEYS[2])
    token = redis.call('get', KEYS[2])
    redis.call('hset', KEYS[1], 'token', token)
  end
  return { 1, token }
end
return { 0, redis.call('pttl', KEYS[1]) }
