-- KEYS key, index, family prefix  ARGV json
-- The old public key's index entry is read off the old key, so it is built from the prefix (KEYS[3]).
local old = redis.call('GET', KEYS[1])
if old then redis.call('DEL', KEYS[3] .. 'rkp:' .. cjson.decode(old).publicKey) end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], cjson.decode(ARGV[1]).principalId)
return 1
