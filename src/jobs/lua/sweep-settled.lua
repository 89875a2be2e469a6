-- KEYS lease, money prefix  ARGV jobId, updatedAtJson
-- Takes a swept job out of the lease set once its settlement is made, if it is still the job that was swept
-- (a job resent since is a new attempt under the same id, with a lease of its own that must stay).
local k = KEYS[2] .. 'j:' .. ARGV[1]
local f = redis.call('HMGET', k, 'status', 'p:updatedAt')
if not f[1] or (f[1] == 'failed' and f[2] == ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
