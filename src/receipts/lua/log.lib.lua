-- The receipt log's layout, shared by every script that appends to it or reads it (src/receipts/redis-log.ts
-- says what each key holds). `prefix` is the money prefix, given to each script as a KEYS entry.
local function log_key(prefix, level, index)
  return prefix .. 'log:h:' .. level .. ':' .. math.floor(index / 256), (index % 256) * 64
end
-- A chunk is made at its full length (256 zeroed slots) when first written. `known`: the caller knows the
-- chunk exists, so it is not looked for.
local function log_put(prefix, level, index, hex, known)
  local k, off = log_key(prefix, level, index)
  if not known and redis.call('EXISTS', k) == 0 then redis.call('SETRANGE', k, 256 * 64 - 1, '\0') end
  redis.call('SETRANGE', k, off, hex)
end
local function log_get(prefix, level, index)
  local k, off = log_key(prefix, level, index)
  local h = redis.call('GETRANGE', k, off, off + 63)
  if #h ~= 64 or string.byte(h, 1) == 0 then return false end
  return h
end
-- Leaves are sequenced by `INCR` and each is written in the script that drew its index, so leaf i - 1 is
-- written: unless i starts a chunk, its chunk exists.
local function log_append(prefix, hex)
  local i = redis.call('INCR', prefix .. 'log:size') - 1
  log_put(prefix, 0, i, hex, i % 256 ~= 0)
  return i
end
