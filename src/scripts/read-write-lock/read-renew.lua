--[[ read-write-lock/read-renew: the watchdog's batch renewal of read holds. Each reader has its own
expiry inside the read hash, so renewing one reader never shortens another.
KEYS[i]      read hash number i ("t:<owner>" = expiry in ms, Redis clock)
ARGV[2i-1]   owner id of KEYS[i]
ARGV[2i]     new lease of KEYS[i] in ms
Returns      array: 1 where the owner still held a live read hold (lease reset), 0 where it was gone ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = {}
for i = 1, #KEYS do
  local field = 't:' .. ARGV[2 * i - 1]
  local lease = tonumber(ARGV[2 * i])
  local expiry = tonumber(redis.call('hget', KEYS[i], field) or '0')
  if expiry > now then
    redis.call('hset', KEYS[i], field, now + lease)
    local ttl = redis.call('pttl', KEYS[i])
    if ttl < lease then
      redis.call('pexpire', KEYS[i], lease)
    end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
