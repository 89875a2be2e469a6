-- A job's writes (src/jobs/redis-store.ts has the layout), shared by the job store's own scripts and the
-- ledger's reserve and settle scripts, which open and close a job in the same write as its money.

-- The Redis server's clock in epoch ms: the one clock every lease is written and judged on.
local function job_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Creates the job unless a live one has its id. `rsv`, when the ledger opens the job, is what only its
-- reserve decided about the job's reservation: {billing, micro, expiresAt, day}, kept as the field `rsv`.
-- `now`, when given, is the Redis server's clock (`job_now_ms`) the caller already read in this script, so
-- the lease is stamped without a second `TIME`.
-- Returns {1, false} when created, else {0, the live job's fields}. A failed job still in the lease set was
-- swept and its settlement is not yet made (sweep.lua): replacing it would lose its reservation and receipt
-- for good, so until a sweep has settled it, it is answered like a live one.
-- One `HSET` writes every field; the `DEL` that clears an ended job's fields runs only when there is one.
local function open_job(jk, lk, doc, status, owner, leaseMs, retention, jobId, rsv, now)
  local st = redis.call('HGET', jk, 'status')
  if st and ((st ~= 'failed' and st ~= 'expired') or redis.call('ZSCORE', lk, jobId)) then return {0, redis.call('HGETALL', jk)} end
  if st then redis.call('DEL', jk) end
  if rsv then
    redis.call('HSET', jk, 'status', status, 'owner', owner, 'doc', doc,
      'rsv', string.format('%s %d %d %s', rsv.billing, rsv.micro, rsv.expiresAt, rsv.day))
  else
    redis.call('HSET', jk, 'status', status, 'owner', owner, 'doc', doc)
  end
  redis.call('PEXPIRE', jk, retention)
  redis.call('ZADD', lk, (now or job_now_ms()) + tonumber(leaseMs), jobId)
  return {1, false}
end

-- Applies a change while `owner` owns the live job: status ('' keeps it), the changed fields (`fields`:
-- ARGV from index `from` on, name/JSON pairs), retention, and the lease (ended when `terminal`, else moved
-- `leaseMs` from now unless ''). Returns false when the owner no longer owns a live job. The status and the
-- changed fields are one `HSET`.
local function update_job(jk, lk, status, owner, retention, jobId, terminal, leaseMs, fields, from)
  local f = redis.call('HMGET', jk, 'status', 'owner')
  if not f[1] or f[2] ~= owner or f[1] == 'succeeded' or f[1] == 'failed' or f[1] == 'expired' then return false end
  local set = {}
  if status ~= '' then set[1] = 'status'; set[2] = status end
  for i = from, #fields, 2 do set[#set + 1] = 'p:' .. fields[i]; set[#set + 1] = fields[i + 1] end
  if #set > 0 then redis.call('HSET', jk, unpack(set)) end
  redis.call('PEXPIRE', jk, retention)
  if terminal == '1' then redis.call('ZREM', lk, jobId)
  elseif leaseMs ~= '' then redis.call('ZADD', lk, 'XX', job_now_ms() + tonumber(leaseMs), jobId) end
  return true
end
