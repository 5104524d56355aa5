-- lib/settled-slot (the form for a server whose slots never move): nothing to check, see
-- lib/settled-slot.lua. existsInSettledSlot(...) answers EXISTS for KEYS[1] and the keys given.
local function existsInSettledSlot(...)
  return redis.call('exists', KEYS[1], ...)
end
local function assertSettledSlot() end
