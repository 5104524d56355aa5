--[[ read-write-lock/write-release: give back one write hold (or all of them). The last one frees
the write lock: every waiting reader is woken, and one waiting writer when no reader is left
(the holder may still read after a downgrade).
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = expiry in ms, Redis clock)
ARGV[1]  owner id
ARGV[2]  channel waiting readers listen on
ARGV[3]  channel waiting writers listen on
ARGV[4]  "1": drop every write hold of the owner (undo of a lost reply); "0": one hold
Returns  -1 when the owner holds no write hold; otherwise its write holds left (0: freed) ]]
--!include lib/rw-readers.lua
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
if ARGV[4] ~= '1' then
  local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
  if left > 0 then
    return left
  end
end
redis.call('del', KEYS[1])
wakeAfterWrite(KEYS[2], ARGV[2], ARGV[3])
return 0
