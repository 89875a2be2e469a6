-- KEYS th, legacy-revoked, identity prefix  (after principal.lib.lua)
-- hash -> token -> principal -> scopes -> legacy flag in one round trip; the token and principal keys are
-- read off the index, so they are built from the identity family's prefix (KEYS[3]), in its slot.
local p = KEYS[3]
local id = redis.call('GET', KEYS[1])
if not id then return false end
local t = redis.call('HMGET', p .. 't:' .. id, 'doc', 'principal', 'revokedAt')
if not t[1] then return false end
local pr = read_principal(p .. 'p:' .. t[2], p .. 'ps:' .. t[2], p .. 'po:' .. t[2])
if not pr then return false end
return {t[1], t[3], redis.call('EXISTS', KEYS[2]), pr}
