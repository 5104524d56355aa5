-- lib/once: makes a script safe to repeat when its reply was lost and it is sent again: the first
-- run's outcome is kept under the call's own marker key (the last of KEYS) for ARGV's last value
-- in ms, and a repeat answers it without doing anything again.
--   local done = remembered(); if done then return done end ... return remember(result)
local function remembered()
  local value = redis.call('get', KEYS[#KEYS])
  if value then
    return tonumber(value)
  end
  return nil
end
local function remember(result)
  redis.call('set', KEYS[#KEYS], result, 'px', ARGV[#ARGV])
  return result
end
