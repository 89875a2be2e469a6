-- KEYS lease  ARGV owner: gives the signing lease up, if `owner` holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
