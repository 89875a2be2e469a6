-- Principal helpers shared by the identity scripts (src/store/redis-identity.ts has the layout).

-- A principal as {doc, rung, aup, {scope JSON...}}, or false when it does not exist.
local function read_principal(pk, psk, pok)
  local f = redis.call('HMGET', pk, 'doc', 'rung', 'aup')
  if not f[1] then return false end
  local ids = redis.call('LRANGE', pok, 0, -1)
  local scopes = {}
  if #ids > 0 then scopes = redis.call('HMGET', psk, unpack(ids)) end
  return {f[1], f[2], f[3], scopes}
end

-- Adds or replaces a scope; a new id goes to the end of the order, a known one keeps its place.
local function put_scope(psk, pok, id, json)
  if redis.call('HSET', psk, id, json) == 1 then redis.call('RPUSH', pok, id) end
end
