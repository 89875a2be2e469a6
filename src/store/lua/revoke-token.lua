-- KEYS t  ARGV at. HSETNX: the first revocation's time stands, a second revoke changes nothing.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], 'revokedAt', ARGV[1])
return redis.call('HMGET', KEYS[1], 'doc', 'revokedAt')
