/**
 * Identity-provider links in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('idp') on a cluster, store/redis.ts):
 *   idp:<issuer>#<subject>   string  the principal the identity names (first link stands)
 *   idpp:<principalId>       string  the principal's link (JSON)
 * `link` is one script: it claims the identity, releases the principal's previous one, stores the record.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import { identityKey, type IdentityLink, type IdentityLinkStore } from './store.js';

// KEYS identity, principal's record  ARGV principalId, json, prefix
const LINK = luaScript(`
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return owner end
local prev = redis.call('GET', KEYS[2])
if prev then
  local p = cjson.decode(prev)
  local old = ARGV[3] .. 'idp:' .. p.issuer .. '#' .. p.subject
  if old ~= KEYS[1] then redis.call('DEL', old) end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return ARGV[1]`);

const GET = luaScript(`return redis.call('GET', KEYS[1])`);

export class RedisIdentityLinks implements IdentityLinkStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('idp');
  }

  async link(principalId: string, link: IdentityLink): Promise<string> {
    const keys = [`${this.#prefix}idp:${identityKey(link.issuer, link.subject)}`, `${this.#prefix}idpp:${principalId}`];
    return (await this.#store.runScript('identity-links.link', LINK, keys, [principalId, JSON.stringify(link), this.#prefix])) as string;
  }

  async linkOf(principalId: string): Promise<IdentityLink | null> {
    const raw = await this.#store.runScript('identity-links.get', GET, [`${this.#prefix}idpp:${principalId}`], []);
    return typeof raw === 'string' ? (JSON.parse(raw) as IdentityLink) : null;
  }
}
