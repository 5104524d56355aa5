#!lua flags=allow-cross-slot-keys
--[[ read-write-lock/read-renew: the watchdog's batch renewal of read holds. Each reader has its own
expiry inside the read hash, so renewing one reader never shortens another. Keys come as in
lock/renew: the first declared to route the call, all of them in ARGV, so that one call serves a
Cluster node's holds of every slot; a key this node does not serve answers -1.
KEYS[1]      the batch's first read hash (routing only; it is also ARGV[1])
ARGV[3i-2]   read hash number i ("t:<owner>" = expiry in ms, Redis clock)
ARGV[3i-1]   owner id of that reader
ARGV[3i]     its new lease in ms
Returns      array: 1 where the owner still held a live read hold (lease reset), 0 where it was gone,
             -1 where this node does not serve its key ]]
--!include lib/node-local.lua
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = {}
for i = 1, #ARGV / 3 do
  local key, field, lease = ARGV[3 * i - 2], 't:' .. ARGV[3 * i - 1], tonumber(ARGV[3 * i])
  local expiry = redis.pcall('hget', key, field)
  if not served(expiry) then
    renewed[i] = -1
  elseif tonumber(expiry or '0') > now then
    redis.call('hset', key, field, now + lease)
    if redis.call('pttl', key) < lease then
      redis.call('pexpire', key, lease)
    end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
