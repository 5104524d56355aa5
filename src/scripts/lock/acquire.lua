--[[ lock/acquire: take the lock, re-enter it, claim it when a release handed it over, or queue up.
A free lock goes to the first live waiter in the queue, never to a caller that did not wait there:
so a process that just released cannot take the lock again ahead of those already waiting.
Waiters whose place lapsed (they stopped refreshing it: the process died) are skipped.
KEYS[1]  lock hash: field = owner id, value = hold count; after a hand-over also "handed-over" =
         the token of the wait it was handed to, until that wait's owner claims it or acquires
         again (owner ids hold a ":", so the field is never an owner's); it goes with the lock
KEYS[2]  queue list: waiting owner ids, in request order
KEYS[3]  waiters hash: owner id -> "<epoch ms (server clock) when its place lapses>|<reservation>|<token>"
         (reservation: how long a lock handed to it is kept until it claims it: its lease, but
         no longer than ARGV[3], as long as its place would outlive it if it died)
ARGV[1]  owner id ("<client id>:<owner id>")
ARGV[2]  lease in ms
ARGV[3]  how long a place is kept without a refresh, in ms
ARGV[4]  "1": join (or refresh) the queue when the lock cannot be taken; "0" or left out (with
         ARGV[3] and ARGV[5]: a plain try sends the fewest arguments): one try, leave no entry;
         "c": only claim a lock this owner holds (set its lease), never take
ARGV[5]  with "1": the wait's token, echoed in the hand-over message so only that wait takes it
Returns  nil when acquired (or re-entered, or claimed); otherwise ms worth waiting before trying
         again: the holder's remaining TTL, or when the lock is free, until the head's place lapses;
         with "c", -3 when this owner does not hold the lock ]]
local owner = ARGV[1]
-- Fast path: no lock and no waiter at all.
if redis.call('exists', KEYS[1], KEYS[3]) == 0 then
  redis.call('hset', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
local function clock()
  local time = redis.call('time')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function take()
  redis.call('hdel', KEYS[3], owner)
  redis.call('hset', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
end

if redis.call('hexists', KEYS[1], owner) == 1 then
  local handedTo = redis.call('hget', KEYS[1], 'handed-over')
  if handedTo then
    redis.call('hdel', KEYS[1], 'handed-over')
  end
  -- The wait the lock was handed to, retrying before its message came, finds its hold already
  -- counted; any other acquisition by the holder re-enters.
  if ARGV[4] ~= 'c' and (ARGV[5] == nil or handedTo ~= ARGV[5]) then
    redis.call('hincrby', KEYS[1], owner, 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
if ARGV[4] == 'c' then
  return -3
end

local function lapses(entry)
  return tonumber(string.match(entry or '', '^(%d+)|')) or 0
end
local now
if redis.call('exists', KEYS[1]) == 0 then
  if redis.call('exists', KEYS[2]) == 0 then
    take()
    return nil
  end
  now = clock()
  while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if not head or head == owner then break end
    if lapses(redis.call('hget', KEYS[3], head)) > now then break end
    redis.call('lpop', KEYS[2])
    redis.call('hdel', KEYS[3], head)
  end
  local head = redis.call('lindex', KEYS[2], 0)
  if not head or head == owner then
    if head then
      redis.call('lpop', KEYS[2])
    end
    take()
    return nil
  end
end

if ARGV[4] == '1' then
  now = now or clock()
  local timeout = tonumber(ARGV[3])
  if redis.call('hexists', KEYS[3], owner) == 0 then
    redis.call('rpush', KEYS[2], owner)
  end
  local reserve = math.min(tonumber(ARGV[2]), timeout)
  redis.call('hset', KEYS[3], owner, (now + timeout) .. '|' .. reserve .. '|' .. ARGV[5])
  -- The queue lives as long as its longest-lived place, so waiters that all died leave nothing behind.
  for i = 2, 3 do
    if redis.call('pttl', KEYS[i]) < timeout then
      redis.call('pexpire', KEYS[i], timeout)
    end
  end
end

local ttl = redis.call('pttl', KEYS[1])
-- PTTL answers 0 in the lease's last millisecond: the lock is still held, retry right after it.
if ttl >= 0 then
  return math.max(ttl, 1)
end
local head = redis.call('lindex', KEYS[2], 0)
if head then
  return math.max(1, lapses(redis.call('hget', KEYS[3], head)) - (now or clock()))
end
return 1
