--[[ lock/renew: the watchdog's batch renewal of many hash-based holds in one call.
KEYS[i]      lock hash number i
ARGV[2i-1]   owner id of KEYS[i]
ARGV[2i]     new lease of KEYS[i] in ms
Returns      array: 1 where the owner still held KEYS[i] (expiry reset), 0 where it was gone ]]
local renewed = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[2 * i - 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[2 * i])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
