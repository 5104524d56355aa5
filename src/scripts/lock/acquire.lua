--[[ lock/acquire: one attempt to take the lock for an owner that holds none of it: one try, or a
try that queues up (refreshing the owner's place) when the lock cannot be taken.
A free lock goes to the first live waiter in the queue, never to a caller that did not wait there:
so a process that just released cannot take the lock again ahead of those already waiting.
Waiters whose place lapsed (they stopped refreshing it: the process died) are skipped.
Safe to repeat: an owner that already holds the lock is this very call run again (its reply was
lost), or the waiter a release handed the lock to: either way it holds it once, with its lease.
KEYS[1]  lock hash: field = owner id, value = hold count; "queued" = "1" once someone queued behind
         the holder (its release then hands the lock over, see lib/lock-hand-over); "token" for a
         FencedLock. Beside it, named after it (same hash tag, so same Cluster slot), and not
         sent, to keep every call small:
         <KEYS[1]>:queue    list: waiting owner ids, in request order
         <KEYS[1]>:waiters  hash: owner id -> "<place lapses at>|<reservation ms>|<wait id>|<ticket>|<queued at>"
         (server ms; reservation: how long a lock handed to it is kept for it; the ticket names the
         attempt that wrote the place, and comes back with the hand-over)
KEYS[2]  a FencedLock's token counter (see fenced-lock/issue); given, the grant issues the holder's
         fencing token in the same step
ARGV[1]  owner id ("<client id>:<owner id>")
ARGV[2]  lease in ms
ARGV[3]  to queue: how long a place is kept without a refresh, in ms (left out: one try only)
ARGV[4]  to queue: the reservation in ms
ARGV[5]  to queue: the wait id
ARGV[6]  to queue: the ticket of this attempt
Returns  nil when acquired (a FencedLock: its token, a decimal string); otherwise ms worth waiting
         before trying again: the holder's remaining TTL, or when the lock is free, until the
         head's place lapses ]]
--!include lib/settled-slot.lua
--!include lib/fence.lua
local owner = ARGV[1]
local queue, waiters = KEYS[1] .. ':queue', KEYS[1] .. ':waiters'
-- Fast path: no lock and no waiter at all. The check also stops the call while the slot migrates.
if existsInSettledSlot(waiters) == 0 then
  redis.call('hset', KEYS[1], owner, '1')
  redis.call('pexpire', KEYS[1], ARGV[2])
  return issueToken()
end
if redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return issueToken()
end
local function clock()
  local time = redis.call('time')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function lapses(entry)
  return tonumber(string.match(entry or '', '^(%d+)|')) or 0
end

local now
local held = redis.call('exists', KEYS[1]) == 1
if not held then
  now = clock()
  while true do
    local head = redis.call('lindex', queue, 0)
    if not head or head == owner then break end
    if lapses(redis.call('hget', waiters, head)) > now then break end
    redis.call('lpop', queue)
    redis.call('hdel', waiters, head)
  end
  local head = redis.call('lindex', queue, 0)
  if not head or head == owner then
    if head then
      redis.call('lpop', queue)
    end
    redis.call('hdel', waiters, owner)
    redis.call('hset', KEYS[1], owner, '1')
    if redis.call('llen', queue) > 0 then
      redis.call('hset', KEYS[1], 'queued', '1')
    end
    redis.call('pexpire', KEYS[1], ARGV[2])
    return issueToken()
  end
end

if ARGV[3] then
  now = now or clock()
  local timeout = tonumber(ARGV[3])
  local queuedAt = string.match(redis.call('hget', waiters, owner) or '', '|(%d+)$')
  if not queuedAt then
    redis.call('rpush', queue, owner)
    queuedAt = now
  end
  local place = (now + timeout) .. '|' .. ARGV[4] .. '|' .. ARGV[5] .. '|' .. ARGV[6] .. '|' .. queuedAt
  redis.call('hset', waiters, owner, place)
  -- Behind a holder: its release must look for the queue.
  if held then
    redis.call('hset', KEYS[1], 'queued', '1')
  end
  -- The queue lives as long as its longest-lived place, so waiters that all died leave nothing behind.
  for _, key in ipairs({ queue, waiters }) do
    if redis.call('pttl', key) < timeout then
      redis.call('pexpire', key, timeout)
    end
  end
end

local ttl = redis.call('pttl', KEYS[1])
-- PTTL answers 0 in the lease's last millisecond: the lock is still held, retry right after it.
if ttl >= 0 then
  return math.max(ttl, 1)
end
local head = redis.call('lindex', queue, 0)
if head then
  return math.max(1, lapses(redis.call('hget', waiters, head)) - (now or clock()))
end
return 1
