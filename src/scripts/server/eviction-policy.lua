--[[ server/eviction-policy: which keys the server may evict under memory pressure (reads only). Any
policy but noeviction may evict a key with a TTL, a held lock's included.
KEYS[1]  any key of the node asked (routes the call on a Cluster; not read)
Returns  the server's maxmemory-policy, or nil when it does not say (INFO refused) ]]
local ok, info = pcall(redis.call, 'info', 'memory')
if not ok then
  return nil
end
return string.match(info, 'maxmemory_policy:([%w-]+)')
