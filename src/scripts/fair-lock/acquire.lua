--[[ fair-lock/acquire: take the lock in queue order, re-enter it, or join / refresh a place in the queue.
Waiters at the head whose place lapsed (they stopped refreshing it: the process died) are skipped first.
Times come from the server's clock, so clients with skewed clocks still agree on who lapsed.
KEYS[1]  lock hash: field = owner id, value = hold count
KEYS[2]  queue list: owner ids in request order
KEYS[3]  timeouts hash: owner id -> epoch ms after which its place lapses
ARGV[1]  owner id ("<client id>:<owner id>")
ARGV[2]  lease in ms
ARGV[3]  fairWaiterTimeout in ms: how long this owner's place is kept without a refresh
ARGV[4]  "1": join (or refresh) the queue when the lock cannot be taken; "0": one try, leave no entry
Returns  nil when acquired (or re-entered); otherwise ms worth waiting before trying again:
         the holder's remaining TTL, or when the lock is free, until the head's place lapses ]]
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if not head then break end
  local lapses = tonumber(redis.call('hget', KEYS[3], head) or '0')
  if lapses > now then break end
  redis.call('lpop', KEYS[2])
  redis.call('hdel', KEYS[3], head)
end

local head = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 then
  if not head or head == ARGV[1] then
    if head then
      redis.call('lpop', KEYS[2])
      redis.call('hdel', KEYS[3], ARGV[1])
    end
    redis.call('hincrby', KEYS[1], ARGV[1], 1)
    redis.call('pexpire', KEYS[1], ARGV[2])
    return nil
  end
elseif redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end

if ARGV[4] == '1' then
  local timeout = tonumber(ARGV[3])
  if redis.call('hexists', KEYS[3], ARGV[1]) == 0 then
    redis.call('rpush', KEYS[2], ARGV[1])
  end
  redis.call('hset', KEYS[3], ARGV[1], now + timeout)
  -- The queue lives as long as its longest-lived place, so waiters that all died leave nothing behind.
  for i = 2, 3 do
    if redis.call('pttl', KEYS[i]) < timeout then
      redis.call('pexpire', KEYS[i], timeout)
    end
  end
end

local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then
  return ttl
end
head = redis.call('lindex', KEYS[2], 0)
if head then
  return math.max(1, tonumber(redis.call('hget', KEYS[3], head) or '0') - now)
end
return 1
