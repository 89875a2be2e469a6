/**
 * The Lua the Redis store shares with the receipt log (redis-log.ts), kept apart so the store's receipt
 * write (store/redis.ts PUT_RECEIPT_FN, also run inside the meter's settlement script) and the log read
 * the same layout. Under the store's prefix:
 *
 *   log:size              string  leaves sequenced so far (INCR: the next index)
 *   log:h:<level>:<chunk> string  hashes of the complete subtrees of one level, 64 hex digits each, node
 *                                 `index` at offset (index mod 256) * 64 of chunk floor(index / 256);
 *                                 level 0 holds the leaf hashes. Written once, never changed. A chunk is
 *                                 made at its full 16 KiB (zero bytes until written) when its first hash
 *                                 lands: grown piece by piece, Redis would keep up to twice that allocated.
 *   log:cp                hash    size, note: the latest signed checkpoint
 *   log:lease             string  the signing lease's owner (PX: it lapses unless renewed)
 *
 * Hex, not raw bytes: replies stay plain strings for the client, for 32 more bytes per hash.
 */
export const LOG_FN = `
local function log_key(prefix, level, index)
  return prefix .. 'log:h:' .. level .. ':' .. math.floor(index / 256), (index % 256) * 64
end
local function log_put(prefix, level, index, hex)
  local k, off = log_key(prefix, level, index)
  if redis.call('EXISTS', k) == 0 then redis.call('SETRANGE', k, 256 * 64 - 1, '\\0') end
  redis.call('SETRANGE', k, off, hex)
end
local function log_get(prefix, level, index)
  local k, off = log_key(prefix, level, index)
  local h = redis.call('GETRANGE', k, off, off + 63)
  if #h ~= 64 or string.byte(h, 1) == 0 then return false end
  return h
end
local function log_append(prefix, hex)
  local i = redis.call('INCR', prefix .. 'log:size') - 1
  log_put(prefix, 0, i, hex)
  return i
end
`;
