-- KEYS pending, notice  ARGV by, at — moves the pending recovery to the notice in one step.
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local p = cjson.decode(raw)
local notice = cjson.encode({ id = p.id, startedAt = p.startedAt, cancelledAt = tonumber(ARGV[2]), by = ARGV[1] })
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], notice)
return notice
