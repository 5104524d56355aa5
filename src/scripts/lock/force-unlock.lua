--[[ lock/force-unlock: delete the lock whoever holds it, and hand it over like lock/release.
KEYS[1]  lock hash
KEYS[2]  queue list (see lock/acquire)
KEYS[3]  waiters hash (see lock/acquire)
ARGV[1]  channel to publish on
ARGV[2]  longest TTL in ms a handed-over lock keeps until its new owner claims it
Returns  1 when a lock was deleted, 0 when there was none ]]
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
local now
while true do
  local head = redis.call('lpop', KEYS[2])
  if not head then break end
  if not now then
    local time = redis.call('time')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  local lapses, lease, token = string.match(redis.call('hget', KEYS[3], head) or '', '^(%d+)|(%d+)|(.*)$')
  if lapses and tonumber(lapses) > now then
    local reserve = math.min(tonumber(lease), tonumber(ARGV[2]))
    redis.call('hset', KEYS[1], head, 1)
    redis.call('pexpire', KEYS[1], reserve)
    redis.call('hset', KEYS[3], head, 'g')
    if redis.call('pttl', KEYS[3]) < reserve then
      redis.call('pexpire', KEYS[3], reserve)
    end
    -- On the new owner's client channel ("<channel>:<client id>"): only its process wakes.
    redis.call('publish', ARGV[1] .. ':' .. (string.match(head, '^([^:]*):') or head), '=' .. head .. '|' .. token)
    return 1
  end
  redis.call('hdel', KEYS[3], head)
end
redis.call('publish', ARGV[1], '1')
return 1
