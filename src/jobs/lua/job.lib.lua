-- A job's writes (src/jobs/redis-store.ts has the layout), shared by the job store's own scripts and the
-- ledger's reserve and settle scripts, which open and close a job in the same write as its money.

-- The Redis server's clock in epoch ms: the one clock every lease is written and judged on.
local function job_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Creates the job unless a live one has its id. `rsv`, when the ledger opens the job, is what only its
-- reserve decided about the job's reservation: {billing, micro, expiresAt, day}, kept as the field `rsv`.
-- Returns {1, false} when created, else {0, the live job's fields}. A failed job still in the lease set was
-- swept and its settlement is not yet made (sweep.lua): replacing it would lose its reservation and receipt
-- for good, so until a sweep has settled it, it is answered like a live one.
local function open_job(jk, lk, doc, status, owner, leaseMs, retention, jobId, rsv)
  local st = redis.call('HGET', jk, 'status')
  if st and ((st ~= 'failed' and st ~= 'expired') or redis.call('ZSCORE', lk, jobId)) then return {0, redis.call('HGETALL', jk)} end
  redis.call('DEL', jk)
  redis.call('HSET', jk, 'status', status, 'owner', owner, 'doc', doc)
  if rsv then
    redis.call('HSET', jk, 'rsv', string.format('%s %d %d %s', rsv.billing, rsv.micro, rsv.expiresAt, rsv.day))
  end
  redis.call('PEXPIRE', jk, retention)
  redis.call('ZADD', lk, job_now_ms() + tonumber(leaseMs), jobId)
  return {1, false}
end

-- Applies a change while `owner` owns the live job: status ('' keeps it), the changed fields (`fields`:
-- ARGV from index `from` on, name/JSON pairs), retention, and the lease (ended when `terminal`, else moved
-- `leaseMs` from now unless ''). Returns false when the owner no longer owns a live job.
local function update_job(jk, lk, status, owner, retention, jobId, terminal, leaseMs, fields, from)
  local f = redis.call('HMGET', jk, 'status', 'owner')
  if not f[1] or f[2] ~= owner or f[1] == 'succeeded' or f[1] == 'failed' or f[1] == 'expired' then return false end
  if status ~= '' then redis.call('HSET', jk, 'status', status) end
  for i = from, #fields, 2 do redis.call('HSET', jk, 'p:' .. fields[i], fields[i + 1]) end
  redis.call('PEXPIRE', jk, retention)
  if terminal == '1' then redis.call('ZREM', lk, jobId)
  elseif leaseMs ~= '' then redis.call('ZADD', lk, 'XX', job_now_ms() + tonumber(leaseMs), jobId) end
  return true
end
