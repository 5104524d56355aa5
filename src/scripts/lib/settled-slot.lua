-- lib/settled-slot (the Cluster form): the first thing every script that writes does (but the
-- watchdog's batch renewals, see lib/node-local). While a Cluster slot migrates, a command in a
-- script fails when it reaches a key the node lacks (the source: one not there, or not yet or no
-- longer there; the target: any command of several keys missing one), and the writes made before it
-- stay: the call would be left half done. existsInSettledSlot(...) answers EXISTS for KEYS[1] and
-- the keys given, together with a key that never exists, which fails exactly when KEYS[1]'s slot is
-- migrating or importing (Redis says 'non local key', Valkey 'during rehashing of the slot'): the
-- script then stops with TRYAGAIN, having changed nothing, and the client sends it again. A slot
-- cannot start to move while a script runs, so a script that passes runs to its end.
-- assertSettledSlot() is the check alone.
-- A server whose slots never move (not a Cluster) runs the form in lib/settled-slot-standalone.lua
-- instead: scripts/build-lua.mjs makes each script that includes this file in both forms.
local function existsInSettledSlot(...)
  local found = redis.pcall('exists', KEYS[1], KEYS[1] .. ':never-exists', ...)
  if type(found) == 'table' then
    local moving = string.find(found.err, 'non local key', 1, true)
      or string.find(found.err, 'rehashing of the slot', 1, true)
    if moving then
      error({ err = 'TRYAGAIN the hash slot of ' .. KEYS[1] .. ' is migrating' })
    end
    error(found)
  end
  return found
end
local function assertSettledSlot()
  existsInSettledSlot()
end
