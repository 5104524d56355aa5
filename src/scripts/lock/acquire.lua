--[[ lock/acquire: take the lock, or re-enter it for the same owner.
KEYS[1]  lock hash: field = owner id, value = hold count
ARGV[1]  owner id ("<client id>:<owner id>")
ARGV[2]  lease in ms
Returns  nil when acquired (or re-entered); otherwise the holder's remaining TTL in ms ]]
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
return redis.call('pttl', KEYS[1])
