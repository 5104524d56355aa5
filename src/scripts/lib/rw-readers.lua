-- lib/rw-readers: included by the read-write-lock scripts that look at the read hash
-- ("n:<owner>" = read holds, "t:<owner>" = lease expiry in ms, Redis clock).
local function serverNow()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drops the readers of `readHash` whose lease ran out; returns the latest expiry among the live
-- readers (0 when none), not counting the field `except` ("t:<owner>") when given.
local function pruneReaders(readHash, now, except)
  local fields = redis.call('hgetall', readHash)
  local latest = 0
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 't:' then
      local expiry = tonumber(fields[i + 1])
      if expiry <= now then
        redis.call('hdel', readHash, fields[i], 'n:' .. string.sub(fields[i], 3))
      elseif expiry > latest and fields[i] ~= except then
        latest = expiry
      end
    end
  end
  return latest
end

-- True when some reader's lease on `readHash` is still running (reads only).
local function anyLiveReader(readHash, now)
  local fields = redis.call('hgetall', readHash)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 't:' and tonumber(fields[i + 1]) > now then
      return true
    end
  end
  return false
end

-- The write lock was just freed: wake every waiting reader, and one waiting writer when no reader
-- holds the lock (the former writer may still read after a downgrade).
local function wakeAfterWrite(readHash, readChannel, writeChannel)
  redis.call('spublish', readChannel, '*')
  if not anyLiveReader(readHash, serverNow()) then
    redis.call('spublish', writeChannel, '1')
  end
end
