--[[ read-write-lock/read-check: whether each reader still holds a live read hold, reading only.
Sent on the tracking connection, the read is what makes Redis track the key.
KEYS[i]  read hash number i ("t:<owner>" = that reader's lease end in ms, Redis clock)
ARGV[i]  owner id of KEYS[i]
Returns  array: 1 where the owner's read lease has not run out, 0 where it has or is gone ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = {}
for i = 1, #KEYS do
  local expiry = tonumber(redis.call('hget', KEYS[i], 't:' .. ARGV[i]) or '0')
  held[i] = expiry > now and 1 or 0
end
return held
