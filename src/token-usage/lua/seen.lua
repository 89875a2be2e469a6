-- KEYS usage  ARGV at   (ISO-8601 strings of one format compare in time order)
local held = redis.call('GET', KEYS[1])
if not held or held < ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
