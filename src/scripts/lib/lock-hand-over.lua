-- lib/lock-hand-over: included by the lock scripts that free the lock (release, force-unlock, leave).
-- handOver(channel): the lock hash (KEYS[1]) was just deleted; give the lock to the first live
-- waiter of the queue (KEYS[2], places in the waiters hash KEYS[3]): its place is given up, it
-- holds the lock once, marked "handed-over" = the token of its wait, for the reservation its
-- place names (its lease, but no longer than its own place would outlive it dead) until it claims
-- it with its lease, and it is told "=<token>" on its own client's channel
-- ("<channel>:<client id>"), so only its process wakes. Places that lapsed are dropped on the way;
-- with no live waiter left the lock stays free (a waiter whose place lapsed while it still lives
-- queues again at its next refresh). Each call here is time between the release and the new
-- holder's wake-up: the mark lives in the lock hash, so it costs no call of its own and goes with it.
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
    redis.call('hdel', KEYS[3], head)
    if lapses and tonumber(lapses) > now then
      redis.call('hset', KEYS[1], head, 1, 'handed-over', token)
      redis.call('pexpire', KEYS[1], reserve)
      redis.call('publish', channel .. ':' .. (string.match(head, '^([^:]*):') or head), '=' .. token)
      return
    end
  end
end
