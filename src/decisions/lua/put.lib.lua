-- put_decision: stores one decision record once and indexes it by time, trimming the index past the
-- retention. Used by put.lua, and by the ledger's reserve (src/metering/lua/reserve.lua), in whose write an
-- admitted call's record rides when the decision keys share the money's slot (one primary).
-- zkey the time index (zset), rkey the record's key, id the decision id, json the record, at its time
-- (epoch ms), retention (ms), now (epoch ms).
local function put_decision(zkey, rkey, id, json, at, retention, now)
  if redis.call('SET', rkey, json, 'NX', 'PX', retention) then
    redis.call('ZADD', zkey, at, id)
  end
  redis.call('ZREMRANGEBYSCORE', zkey, '-inf', '(' .. (tonumber(now) - tonumber(retention)))
end
