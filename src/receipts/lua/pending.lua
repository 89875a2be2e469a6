-- KEYS size, cp, money prefix  ARGV max  (after log.lib.lua)
-- Leaves from the checkpoint's size on, and the checkpoint's frontier.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local cp = redis.call('HMGET', KEYS[2], 'size', 'note')
local s = tonumber(cp[1] or '0')
local to = math.min(n, s + tonumber(ARGV[1]))
-- The leaves of one chunk are adjacent: one GETRANGE a chunk, each leaf then checked as log_get would.
local leaves = {}
local i = s
while i < to do
  local k, off = log_key(KEYS[3], 0, i)
  local count = math.min(to, (math.floor(i / 256) + 1) * 256) - i
  local h = redis.call('GETRANGE', k, off, off + 64 * count - 1)
  assert(#h == 64 * count, 'log leaf missing')
  for j = 0, count - 1 do assert(string.byte(h, j * 64 + 1) ~= 0, 'log leaf missing') end
  leaves[#leaves + 1] = h
  i = i + count
end
local frontier, start = {}, 0
for level = 52, 0, -1 do
  local w = 2 ^ level
  if start + w <= s then
    frontier[#frontier + 1] = assert(log_get(KEYS[3], level, start / w), 'log node missing')
    start = start + w
  end
end
return {n, cp[1] or false, cp[2] or false, table.concat(leaves), table.concat(frontier)}
