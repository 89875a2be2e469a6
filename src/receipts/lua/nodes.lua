-- KEYS money prefix  ARGV [level, index]...  (after log.lib.lua): the nodes' hashes, concatenated.
local out = {}
for i = 1, #ARGV, 2 do
  local h = log_get(KEYS[1], tonumber(ARGV[i]), tonumber(ARGV[i + 1]))
  if not h then return redis.error_reply('log node ' .. ARGV[i] .. '/' .. ARGV[i + 1] .. ' is not stored') end
  out[#out + 1] = h
end
return table.concat(out)
