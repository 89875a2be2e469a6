-- KEYS passkey, index  ARGV json, id
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
