-- KEYS lease, cp, money prefix  ARGV owner, fromSize (-1: none), toSize, note, [level, index, hex]...
-- (after log.lib.lua) Stores the new tree nodes and the signed checkpoint, while `owner` holds the lease
-- and the checkpoint is still the one it signed from.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lost' end
local cur = tonumber(redis.call('HGET', KEYS[2], 'size') or '-1')
if cur ~= tonumber(ARGV[2]) then return 'stale' end
for i = 5, #ARGV, 3 do log_put(KEYS[3], tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2]) end
redis.call('HSET', KEYS[2], 'size', ARGV[3], 'note', ARGV[4])
return 'ok'
