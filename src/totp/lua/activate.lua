-- KEYS record, codes  ARGV step, hashes...
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'active', 'lastStep', ARGV[1])
redis.call('DEL', KEYS[2])
for i = 2, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1
