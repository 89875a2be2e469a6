-- KEYS key, pending  ARGV secretHash, recovery json
local raw = redis.call('GET', KEYS[1])
if not raw then return 'secret-invalid' end
local k = cjson.decode(raw)
if type(k.secretHash) ~= 'string' or k.secretHash ~= ARGV[1] then return 'secret-invalid' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'pending' end
k.secretHash = cjson.null
redis.call('SET', KEYS[1], cjson.encode(k))
redis.call('SET', KEYS[2], ARGV[2])
return 'started'
