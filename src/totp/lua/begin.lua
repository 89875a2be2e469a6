-- KEYS record  ARGV secret, createdAt
if redis.call('HGET', KEYS[1], 'state') == 'active' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'secret', ARGV[1], 'state', 'pending', 'lastStep', '-1', 'createdAt', ARGV[2])
return 1
