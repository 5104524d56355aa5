--[[ semaphore/acquire: take ARGV[1] permits, unless that would eat into the reservation of the
oldest live waiter (the queue head), which is what keeps a large request from being starved by a
stream of small ones. A waiter that cannot take its permits joins (or refreshes) the queue.
KEYS[1]  permits: string, the available count (no TTL: it is the semaphore's state)
KEYS[2]  queue: zset, waiter id -> arrival (server time, µs)
KEYS[3]  wants: hash, waiter id -> "<permits>:<expires at, server ms>"
KEYS[4]  grants: zset, acquisition id -> grant time (ms); "!<id>" marks an acquisition given up
ARGV[1]  permits wanted (integer >= 1)
ARGV[2]  acquisition id (one per acquisition: a repeat finds its grant, a give-up can undo it)
ARGV[3]  waiter id, or "" for a one-shot attempt that must not queue
ARGV[4]  waiter timeout (ms): a queued waiter that stops refreshing its entry is skipped after it
ARGV[5]  channel to publish on when a vanished head's reservation is lifted and permits are free
ARGV[6]  how long grants are remembered (ms)
Returns  nil when acquired (or acquired already by this acquisition: a repeat); otherwise ms after
         which to retry (the waiter's refresh period, or sooner when the head's entry goes stale) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[1])
local me = ARGV[3]
local timeout = tonumber(ARGV[4])
local retry = math.max(1, math.floor(timeout / 3))
if redis.call('zscore', KEYS[4], ARGV[2]) then
  return nil
end
if redis.call('zscore', KEYS[4], '!' .. ARGV[2]) then
  return retry
end
local avail = tonumber(redis.call('get', KEYS[1]) or '0')
-- Skip vanished waiters at the head (bounded work per call).
local head, reserve, lifted, headExpires = nil, 0, false, nil
for _ = 1, 100 do
  local first = redis.call('zrange', KEYS[2], 0, 0)[1]
  if not first then break end
  local want, expires = string.match(redis.call('hget', KEYS[3], first) or '', '^(%d+):(%d+)$')
  if want and tonumber(expires) > now then
    head = first
    if first ~= me then reserve, headExpires = tonumber(want), tonumber(expires) end
    break
  end
  redis.call('zrem', KEYS[2], first)
  redis.call('hdel', KEYS[3], first)
  lifted = true
end
if avail - n >= reserve then
  avail = redis.call('decrby', KEYS[1], n)
  if me ~= '' and redis.call('zrem', KEYS[2], me) == 1 then
    redis.call('hdel', KEYS[3], me)
  end
  if lifted and avail > 0 and redis.call('exists', KEYS[2]) == 1 then
    redis.call('spublish', ARGV[5], tostring(avail))
  end
  local window = tonumber(ARGV[6])
  redis.call('zremrangebyscore', KEYS[4], '-inf', now - window)
  redis.call('zadd', KEYS[4], now, ARGV[2])
  redis.call('pexpire', KEYS[4], window)
  return nil
end
if me ~= '' then
  redis.call('zadd', KEYS[2], 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), me)
  redis.call('hset', KEYS[3], me, n .. ':' .. (now + timeout))
  redis.call('pexpire', KEYS[2], timeout)
  redis.call('pexpire', KEYS[3], timeout)
end
if lifted and avail > 0 then
  redis.call('spublish', ARGV[5], tostring(avail))
end
-- Blocked by another waiter's reservation: look again when that entry would go stale.
if headExpires then
  retry = math.max(1, math.min(retry, headExpires - now + 1))
end
return retry
