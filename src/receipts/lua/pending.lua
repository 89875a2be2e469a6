-- KEYS size, cp, money prefix  ARGV max  (after log.lib.lua)
-- Leaves from the checkpoint's size on, and the checkpoint's frontier.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local cp = redis.call('HMGET', KEYS[2], 'size', 'note')
local s = tonumber(cp[1] or '0')
local to = math.min(n, s + tonumber(ARGV[1]))
local leaves = {}
for i = s, to - 1 do leaves[#leaves + 1] = assert(log_get(KEYS[3], 0, i), 'log leaf missing') end
local frontier, start = {}, 0
for level = 52, 0, -1 do
  local w = 2 ^ level
  if start + w <= s then
    frontier[#frontier + 1] = assert(log_get(KEYS[3], level, start / w), 'log node missing')
    start = start + w
  end
end
return {n, cp[1] or false, cp[2] or false, table.concat(leaves), table.concat(frontier)}
