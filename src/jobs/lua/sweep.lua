-- KEYS lease, money prefix  ARGV limit, retention, errorJson, updatedAtJson  (after job.lib.lua)
-- Fails each job whose lease ended ("now" is the Redis server's) and answers them.
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. job_now_ms(), 'LIMIT', 0, tonumber(ARGV[1]))) do
  redis.call('ZREM', KEYS[1], id)
  local k = KEYS[2] .. 'j:' .. id
  local st = redis.call('HGET', k, 'status')
  if st and st ~= 'succeeded' and st ~= 'failed' and st ~= 'expired' then
    redis.call('HSET', k, 'status', 'failed', 'p:error', ARGV[3], 'p:updatedAt', ARGV[4])
    redis.call('PEXPIRE', k, ARGV[2])
    table.insert(out, redis.call('HGETALL', k))
  end
end
return out
