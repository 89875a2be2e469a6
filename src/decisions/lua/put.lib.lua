-- put_decision: stores one decision record once and indexes it by time, trimming the index past the
-- retention. Used by put.lua, and by the ledger's reserve (src/metering/lua/reserve.lua), in whose write an
-- admitted call's record rides when the decision keys share the money's slot (one primary).
-- zkey the time index (zset), rkey the record's key, id the decision id, json the record, at its time
-- (epoch ms), retention (ms), now (epoch ms).
-- The index is trimmed by about one write in sixteen (those whose time in ms is a multiple of 16), not by
-- every one: the record itself expires on its own (PX), a listing skips an id whose record has expired,
-- and what an index keeps past the retention is the few entries since the last trim.
local function put_decision(zkey, rkey, id, json, at, retention, now)
  if redis.call('SET', rkey, json, 'NX', 'PX', retention) then
    redis.call('ZADD', zkey, at, id)
  end
  if tonumber(at) % 16 == 0 then
    redis.call('ZREMRANGEBYSCORE', zkey, '-inf', '(' .. (tonumber(now) - tonumber(retention)))
  end
end
