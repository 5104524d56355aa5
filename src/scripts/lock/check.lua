--[[ lock/check: whether each owner still holds its lock, reading only. Sent on the tracking
connection, the read is what makes Redis track the key (and tell when it changes again).
KEYS[i]  lock hash number i
ARGV[i]  owner id of KEYS[i]
Returns  array: 1 where the owner holds KEYS[i], 0 where it does not ]]
local held = {}
for i = 1, #KEYS do
  held[i] = redis.call('hexists', KEYS[i], ARGV[i])
end
return held
