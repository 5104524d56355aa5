--[[ semaphore/give-up: an acquisition ends without keeping permits (its wait timed out, was aborted,
or failed; or it was aborted as its winning attempt came back). Its place in the queue goes (if it
was the head, its reservation is lifted and free permits are announced); permits it was granted
(an attempt whose reply was lost) are given back; if no attempt of it ran yet, it is marked
cancelled so that a late one takes nothing.
Safe to repeat: the grant is given back once; a repeat only marks the acquisition cancelled.
KEYS[1]  permits: string, the available count
KEYS[2]  queue: zset, waiter id -> arrival
KEYS[3]  wants: hash, waiter id -> "<permits>:<expires at>"
KEYS[4]  grants: zset, acquisition id -> grant time (ms)
ARGV[1]  acquisition id (also its waiter id)
ARGV[2]  permits it asked for
ARGV[3]  channel
ARGV[4]  how long grants are remembered (ms)
Returns  1 when permits were given back, 0 when the acquisition had taken nothing ]]
--!include lib/settled-slot.lua
assertSettledSlot()
local wasHead = redis.call('zrange', KEYS[2], 0, 0)[1] == ARGV[1]
redis.call('hdel', KEYS[3], ARGV[1])
redis.call('zrem', KEYS[2], ARGV[1])
if redis.call('zrem', KEYS[4], ARGV[1]) == 1 then
  local avail = redis.call('incrby', KEYS[1], ARGV[2])
  if avail > 0 then
    redis.call('spublish', ARGV[3], tostring(math.min(tonumber(ARGV[2]), avail)))
  end
  return 1
end
local t = redis.call('time')
redis.call('zadd', KEYS[4], tonumber(t[1]) * 1000, '!' .. ARGV[1])
redis.call('pexpire', KEYS[4], ARGV[4])
if wasHead then
  local avail = tonumber(redis.call('get', KEYS[1]) or '0')
  if avail > 0 and redis.call('exists', KEYS[2]) == 1 then
    redis.call('spublish', ARGV[3], tostring(avail))
  end
end
return 0
