-- lib/node-local: for scripts that reach keys they did not declare (a batch of one Cluster node's
-- keys in several slots, see lock/renew). served(reply) takes the reply of a redis.pcall on such a
-- key: false when this node does not serve the key (its slot moved away), true otherwise; any other
-- error is raised as redis.call would have raised it.
local function served(reply)
  if type(reply) == 'table' and reply.err then
    if string.find(reply.err, 'non local key', 1, true) then
      return false
    end
    error(reply)
  end
  return true
end
