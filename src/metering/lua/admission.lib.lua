-- The admission rule, src/metering/limits.ts `decide` step for step, over the same named inputs (the
-- Admission that limits.ts `admission` builds, decoded from JSON) and to the same verdicts. `balance` is a
-- function: the balance is read only when the call cannot be free.
local function decide(a, day, balance)
  local est = a.estimatedTokens
  local rungTokens = day.rungTokensUsed + day.rungTokensHeld
  local rung = a.rung
  if rung and rungTokens + est > rung.ceilingPerDay then return {kind = 'ceiling', rungTokens = rungTokens} end
  local units = 1
  if a.freeUnit == 'tokens' then units = est end
  local freeCount = day.freeUsed + day.freeHeld
  local isFree = freeCount + units <= a.freePerDay and not (rung and rungTokens + est > rung.tokensPerDay)
  local rungHold = 0
  if rung then rungHold = est end
  if isFree then return {kind = 'ok', billing = 'free', micro = 0, freeHold = units, rungHold = rungHold} end
  local b = balance()
  local available = b.granted - b.spent - b.reserved
  if available < a.costMicroUSD then
    return {kind = 'credits', granted = b.granted, available = available, rungTokens = rungTokens, freeCount = freeCount}
  end
  return {kind = 'ok', billing = 'paid', micro = a.costMicroUSD, freeHold = 0, rungHold = rungHold}
end

-- A table of named fields as a flat reply {name, value, ...}: integers stay Redis integers, exact (cjson
-- would print them with 14 digits).
local function named(t, order)
  local out = {}
  for _, k in ipairs(order) do
    if t[k] ~= nil then out[#out + 1] = k; out[#out + 1] = t[k] end
  end
  return out
end
