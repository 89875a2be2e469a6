-- KEYS job, lease  ARGV doc, status, owner, leaseMs (from now), retention, jobId  (after job.lib.lua)
return open_job(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], false)
