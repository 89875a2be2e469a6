-- KEYS tv1, legacy-revoked, identity prefix  ARGV at
-- O(v1 tokens) once, inside one script: no token slips through.
local n = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local tk = KEYS[3] .. 't:' .. id
  if redis.call('EXISTS', tk) == 1 and redis.call('HSETNX', tk, 'revokedAt', ARGV[1]) == 1 then n = n + 1 end
end
redis.call('SET', KEYS[2], ARGV[1], 'NX')
return n
