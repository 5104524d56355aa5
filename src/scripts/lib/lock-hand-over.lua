-- lib/lock-hand-over: included by the lock scripts that free the lock (release, force-unlock, leave).
-- handOver(channel): the lock hash (KEYS[1]) was just deleted; give the lock to the first live
-- waiter of the queue (KEYS[2], places in the waiters hash KEYS[3]): hold count 1, TTL the
-- reservation its place names (its lease, but no longer than its own place would outlive it
-- dead) until it claims it with its lease, mark it "g|<token>" in the waiters
-- hash, and tell it "=<token>" (the token of its wait) on its own client's channel
-- ("<channel>:<client id>"), so only its process wakes. Places that lapsed are dropped on the way;
-- with no live waiter left the lock stays free (a waiter whose place lapsed while it still lives
-- queues again at its next refresh).
local function handOver(channel)
  local now
  while true do
    local head = redis.call('lpop', KEYS[2])
    if not head then break end
    if not now then
      local time = redis.call('time')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    local lapses, reserve, token = string.match(redis.call('hget', KEYS[3], head) or '', '^(%d+)|(%d+)|(.*)$')
    if lapses and tonumber(lapses) > now then
      reserve = tonumber(reserve)
      redis.call('hset', KEYS[1], head, 1)
      redis.call('pexpire', KEYS[1], reserve)
      redis.call('hset', KEYS[3], head, 'g|' .. token)
      if redis.call('pttl', KEYS[3]) < reserve then
        redis.call('pexpire', KEYS[3], reserve)
      end
      redis.call('publish', channel .. ':' .. (string.match(head, '^([^:]*):') or head), '=' .. token)
      return
    end
    redis.call('hdel', KEYS[3], head)
  end
end
