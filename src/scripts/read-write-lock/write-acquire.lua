--[[ read-write-lock/write-acquire: take the write lock for an owner that holds none of it. It waits
while another owner writes or while any live read hold exists, the caller's own included (no
upgrade). Re-entry goes through lock/reenter (the write hash has the lock's shape).
Safe to repeat: an owner that already holds the write lock is this very call run again.
KEYS[1]  write hash: field = owner id, value = write hold count (expires with the write lease)
KEYS[2]  read hash ("n:<owner>" = holds, "t:<owner>" = lease end in ms, Redis clock)
ARGV[1]  owner id
ARGV[2]  lease in ms
Returns  nil when acquired; otherwise ms until the blocking holder's lease runs out (the
         writer's, or the latest reader's) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
if redis.call('exists', KEYS[1]) == 1 then
  if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    -- PTTL says 0 in the last millisecond before expiry; 1 makes the waiter retry then, not much later.
    local ttl = redis.call('pttl', KEYS[1])
    return ttl == 0 and 1 or ttl
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
local now = serverNow()
local latest = pruneReaders(KEYS[2], now)
if latest > 0 then
  return latest - now
end
redis.call('del', KEYS[2])
redis.call('hset', KEYS[1], ARGV[1], 1)
redis.call('pexpire', KEYS[1], ARGV[2])
return nil
