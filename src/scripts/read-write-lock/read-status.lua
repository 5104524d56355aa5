--[[ read-write-lock/read-status: the read side's state in one round trip (no writes).
KEYS[1]  read hash ("n:<owner>" = holds, "t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  owner id
Returns  { 1 when any live reader holds it else 0, this owner's live read holds,
           ms until the latest reader expires (-2: no live reader) } ]]
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = redis.call('hgetall', KEYS[1])
local latest = 0
local holds = 0
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 't:' then
    local expiry = tonumber(fields[i + 1])
    if expiry > now then
      if expiry > latest then
        latest = expiry
      end
      if string.sub(fields[i], 3) == ARGV[1] then
        holds = tonumber(redis.call('hget', KEYS[1], 'n:' .. ARGV[1]) or '0')
      end
    end
  end
end
if latest == 0 then
  return { 0, 0, -2 }
end
return { 1, holds, latest - now }
