-- KEYS p, ps, po  ARGV scopeId, scopeJson  (after principal.lib.lua)
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
put_scope(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
return read_principal(KEYS[1], KEYS[2], KEYS[3])
