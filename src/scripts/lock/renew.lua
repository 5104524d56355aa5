#!lua flags=allow-cross-slot-keys
--[[ lock/renew: the watchdog's batch renewal of many hash-based holds in one call. On a Cluster one
call renews every due hold of one node, whatever slots they lie in: only the first key is declared
(it routes the call to its node); the others come in ARGV, which Redis allows for keys this node
serves (allow-cross-slot-keys). A key this node does not serve (its slot moved) answers -1, and the
watchdog renews it on its own, by a call that declares it.
KEYS[1]      the batch's first lock hash (routing only; it is also ARGV[1])
ARGV[3i-2]   lock hash number i
ARGV[3i-1]   owner id of that lock
ARGV[3i]     its new lease in ms
Returns      array: 1 where the owner still held lock i (expiry reset), 0 where it was gone, -1 where
             this node does not serve its key ]]
--!include lib/node-local.lua
local renewed = {}
for i = 1, #ARGV / 3 do
  local key, owner = ARGV[3 * i - 2], ARGV[3 * i - 1]
  local held = redis.pcall('hexists', key, owner)
  if not served(held) then
    renewed[i] = -1
  elseif held == 1 then
    redis.call('pexpire', key, ARGV[3 * i])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
