-- KEYS lock  ARGV token: deletes only the holder's own lock (one that lapsed and was retaken is not its).
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
