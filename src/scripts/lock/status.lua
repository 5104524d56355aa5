--[[ lock/status: read the lock's state in one round trip (no writes).
KEYS[1]  lock hash
ARGV[1]  owner id
Returns  { exists (0/1), this owner's hold count, remaining TTL in ms (-2: no key, -1: no expiry) } ]]
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
return { redis.call('exists', KEYS[1]), holds, redis.call('pttl', KEYS[1]) }
