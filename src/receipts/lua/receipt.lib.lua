-- Writes a receipt once, sequences it as the next leaf of the receipt log (after log.lib.lua) and lists it
-- under its principal and day: one atomic step, so no receipt exists without its leaf nor a leaf without its
-- receipt. The stored JSON is the canonical receipt the leaf hash was computed from (src/receipts/canonical.ts)
-- with `logIndex` appended after its members, outside what was hashed. The meter's settlement runs it in the
-- same script as the money, which has already read the receipt's key and found none (`absent`).
local function put_receipt(rk, ik, json, id, score, prefix, leaf, absent)
  if not absent and redis.call('EXISTS', rk) == 1 then return 0 end
  local i = log_append(prefix, leaf)
  redis.call('SET', rk, string.sub(json, 1, -2) .. ',"logIndex":' .. string.format('%d', i) .. '}')
  redis.call('ZADD', ik, score, id)
  return 1
end
