/**
 * The Lua the Redis store shares with the receipt log (redis-log.ts), kept apart so the store's receipt
 * write (store/redis.ts PUT_RECEIPT_FN, also run inside the meter's settlement script) and the log read
 * the same layout. Under the store's prefix:
 *
 *   log:size              string  leaves sequenced so far (INCR: the next index)
 *   log:h:<level>:<chunk> string  hashes of the complete subtrees of one level, 64 hex digits each, node
 *                                 `index` at offset (index mod 1024) * 64 of chunk floor(index / 1024);
 *                                 level 0 holds the leaf hashes. Written once, never changed.
 *   log:cp                hash    size, note: the latest signed checkpoint
 *   log:lease             string  the signing lease's owner (PX: it lapses unless renewed)
 *
 * Hex, not raw bytes: replies stay plain strings for the client, for 32 more bytes per hash.
 */
export const LOG_FN = `
local function log_key(prefix, level, index)
  return prefix .. 'log:h:' .. level .. ':' .. math.floor(index / 1024), (index % 1024) * 64
end
local function log_put(prefix, level, index, hex)
  local k, off = log_key(prefix, level, index)
  redis.call('SETRANGE', k, off, hex)
end
local function log_get(prefix, level, index)
  local k, off = log_key(prefix, level, index)
  return redis.call('GETRANGE', k, off, off + 63)
end
local function log_append(prefix, hex)
  local i = redis.call('INCR', prefix .. 'log:size') - 1
  log_put(prefix, 0, i, hex)
  return i
end
`;
