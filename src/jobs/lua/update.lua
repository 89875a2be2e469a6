-- KEYS job, lease  ARGV status|'', owner, retention, jobId, terminal (0/1), leaseMs|'', then field, JSON
-- pairs  (after job.lib.lua). 0 when the owner no longer owns a live job; else the job as it now is.
if not update_job(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV, 7) then return 0 end
return redis.call('HGETALL', KEYS[1])
