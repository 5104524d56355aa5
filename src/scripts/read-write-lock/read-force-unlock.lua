--[[ read-write-lock/read-force-unlock: drop every reader, whoever they are, and wake one writer.
Safe to repeat: a marker named by the call remembers that it dropped readers.
KEYS[1]  write hash
KEYS[2]  read hash ("t:<owner>" = lease end in ms, Redis clock)
KEYS[3]  marker of this call
ARGV[1]  channel waiting writers listen on
ARGV[2]  how long the marker is kept, in ms
Returns  1 when a live reader was dropped, 0 when there was none ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/rw-readers.lua
if redis.call('exists', KEYS[3]) == 1 then
  return 1
end
if not anyLiveReader(KEYS[2], serverNow()) then
  redis.call('del', KEYS[2])
  return 0
end
redis.call('del', KEYS[2])
redis.call('set', KEYS[3], '1', 'px', ARGV[2])
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('spublish', ARGV[1], '1')
end
return 1
