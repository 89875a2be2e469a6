-- KEYS lease, money prefix  ARGV limit, retention, errorJson, updatedAtJson, retryMs  (after job.lib.lua)
-- Fails each job whose lease ended ("now" is the Redis server's) and answers them. A failed job stays in the
-- lease set, due again `retryMs` on, until the sweeper that settled its reservation acknowledges it
-- (sweep-settled.lua): a settlement lost to an outage is made by a later sweep, not never. So a terminal
-- job found here is one swept before whose settlement was not acknowledged, and it is answered again.
local out = {}
local now = job_now_ms()
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[1]))) do
  local k = KEYS[2] .. 'j:' .. id
  local st = redis.call('HGET', k, 'status')
  if not st then
    redis.call('ZREM', KEYS[1], id)
  else
    if st ~= 'succeeded' and st ~= 'failed' and st ~= 'expired' then
      redis.call('HSET', k, 'status', 'failed', 'p:error', ARGV[3], 'p:updatedAt', ARGV[4])
      redis.call('PEXPIRE', k, ARGV[2])
    end
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), id)
    table.insert(out, redis.call('HGETALL', k))
  end
end
return out
