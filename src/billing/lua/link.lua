-- KEYS principal->customer, customer->principal  ARGV customer, principal
redis.call('SET', KEYS[1], ARGV[1], 'NX')
redis.call('SET', KEYS[2], ARGV[2])
return redis.call('GET', KEYS[1])
