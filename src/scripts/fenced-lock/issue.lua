--[[ fenced-lock/issue: give the current holder of the lock its fencing token, when it was handed the
lock by a release (lock/acquire issues it with every grant it makes itself). Runs only while the
owner still holds the lock; a re-entering owner keeps the token it has.
Safe to repeat: the token is kept in the lock hash; a repeat returns it.
KEYS[1]  lock hash: field = owner id -> hold count, plus field "token" = the holder's token
KEYS[2]  token counter of the lock's hash slot (see lib/fence)
ARGV[1]  owner id ("<client id>:<owner id>")
Returns  the token as a decimal string; nil when the owner does not hold the lock (any more) ]]
--!include lib/settled-slot.lua
assertSettledSlot()
--!include lib/fence.lua
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
return issueToken()
