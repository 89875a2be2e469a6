-- KEYS lease, cp, money prefix  ARGV owner, fromSize (-1: none), toSize, note, [level, index, hex]...
-- (after log.lib.lua) Stores the new tree nodes and the signed checkpoint, while `owner` holds the lease
-- and the checkpoint is still the one it signed from.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lost' end
local cur = tonumber(redis.call('HGET', KEYS[2], 'size') or '-1')
if cur ~= tonumber(ARGV[2]) then return 'stale' end
-- Nodes come level by level in the order they complete (checkpointer.ts), so node i - 1 of a level was
-- written before node i: unless i starts a chunk, its chunk exists.
for i = 5, #ARGV, 3 do
  local index = tonumber(ARGV[i + 1])
  log_put(KEYS[3], tonumber(ARGV[i]), index, ARGV[i + 2], index % 256 ~= 0)
end
redis.call('HSET', KEYS[2], 'size', ARGV[3], 'note', ARGV[4])
return 'ok'
