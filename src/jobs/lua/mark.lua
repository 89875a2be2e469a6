-- KEYS money prefix  ARGV owner, updatedAtJson, id...  Only a queued job of this owner moves: never a
-- finished one. The jobs are named by id, so their keys are built from the prefix.
for i = 3, #ARGV do
  local k = KEYS[1] .. 'j:' .. ARGV[i]
  local f = redis.call('HMGET', k, 'status', 'owner')
  if f[1] == 'queued' and f[2] == ARGV[1] then redis.call('HSET', k, 'status', 'running', 'p:updatedAt', ARGV[2]) end
end
return 0
