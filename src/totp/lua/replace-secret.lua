-- KEYS record  ARGV expected secret, new secret
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'secret', ARGV[2])
return 1
