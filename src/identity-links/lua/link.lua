-- KEYS identity, principal's record, family prefix  ARGV principalId, json
-- The principal's previous identity key is read off its record, so it is built from the prefix (KEYS[3]).
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return owner end
local prev = redis.call('GET', KEYS[2])
if prev then
  local p = cjson.decode(prev)
  local old = KEYS[3] .. 'idp:' .. p.issuer .. '#' .. p.subject
  if old ~= KEYS[1] then redis.call('DEL', old) end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return ARGV[1]
