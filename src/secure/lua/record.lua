-- KEYS dh, dht  ARGV at, [field, json]...
for i = 2, #ARGV, 2 do
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
  local t = redis.call('HGET', KEYS[2], ARGV[i])
  if not t or ARGV[1] < t then redis.call('HSET', KEYS[2], ARGV[i], ARGV[1]) end
end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
