-- lib/lock-hand-over: included by the lock scripts that free the lock (release, force-unlock, leave).
-- handOver(): the lock hash (KEYS[1]) was just deleted (or renamed), or found free; give the lock to the first
-- live waiter of its queue (<KEYS[1]>:queue, places in <KEYS[1]>:waiters, see lock/acquire): its
-- place is given up, it holds the lock once, for the reservation its place names (its lease, but
-- no longer than its own place would outlive it dead), and it is told "=<wait id>|<ticket>" on its
-- own client's channel ("<KEYS[1]>:hand-over:<client id>"), so only its process wakes. The ticket
-- names the attempt that wrote the place: the waiter knows when it sent that attempt, so it knows
-- the reservation started after then. Places that lapsed are dropped on the way; with no live
-- waiter left the lock stays free (a waiter whose place lapsed while it still lives queues again at
-- its next refresh). A holder with waiters behind it carries the field "queued" (set by them or
-- here), so that its release looks for them; a release without it knows nobody queued.
local function handOver()
  local queue, waiters = KEYS[1] .. ':queue', KEYS[1] .. ':waiters'
  local now
  while true do
    local head = redis.call('lpop', queue)
    if not head then break end
    if not now then
      local time = redis.call('time')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    local lapses, reserve, waitId, ticket =
      string.match(redis.call('hget', waiters, head) or '', '^(%d+)|(%d+)|([^|]*)|([^|]*)|')
    redis.call('hdel', waiters, head)
    if lapses and tonumber(lapses) > now then
      redis.call('hset', KEYS[1], head, '1')
      if redis.call('llen', queue) > 0 then
        redis.call('hset', KEYS[1], 'queued', '1')
      end
      redis.call('pexpire', KEYS[1], reserve)
      local client = string.match(head, '^([^:]*):') or head
      redis.call('spublish', KEYS[1] .. ':hand-over:' .. client, '=' .. waitId .. '|' .. ticket)
      return
    end
  end
end
