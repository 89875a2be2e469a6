-- KEYS lease  ARGV leaseMs (from now), id...  (after job.lib.lua)
local until_ms = job_now_ms() + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[i]) end
return 0
