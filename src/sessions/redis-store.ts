/**
 * Sessions in Redis, beside the store's keys and on its connection (its deadlines, its fail-closed
 * behaviour: Redis down means no session resolves, 503 `store-unavailable`).
 * Layout under the prefix (familyPrefix('ses') on a cluster, store/redis.ts):
 *   ses:<hash>           hash  p (principal), m (method), s (state), c, l, e (created, last seen, expires; ms)
 *                              — expires by itself at the earlier of its idle and absolute ends
 *   sesp:<principalId>   set   hashes of the principal's sessions, for "sign out everywhere"
 * Each operation is one script, so a touch never revives a session another instance just ended.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { keepMs, type SessionRecord, type SessionState, type SessionStore } from './store.js';

const CREATE = loadLua(import.meta.url, 'lua/create.lua');
const TOUCH = loadLua(import.meta.url, 'lua/touch.lua');
const ACTIVATE = loadLua(import.meta.url, 'lua/activate.lua');
const END = loadLua(import.meta.url, 'lua/end.lua');
const END_ALL = loadLua(import.meta.url, 'lua/end-all.lua');

export class RedisSessionStore implements SessionStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('ses');
  }

  #session(hash: string): string {
    return `${this.#prefix}ses:${hash}`;
  }

  #index(principalId: string): string {
    return `${this.#prefix}sesp:${principalId}`;
  }

  async create(s: SessionRecord, idleMs: number): Promise<void> {
    await this.#store.runScript(
      'sessions.create',
      CREATE,
      [this.#session(s.hash), this.#index(s.principalId), this.#prefix],
      [
        s.hash,
        s.principalId,
        s.method,
        s.state,
        String(s.createdAt),
        String(s.lastSeenAt),
        String(s.expiresAt),
        String(keepMs(s, s.lastSeenAt, idleMs)),
        String(Math.max(1, s.expiresAt - s.lastSeenAt)),
      ],
    );
  }

  async touch(hash: string, now: number, idleMs: number): Promise<SessionRecord | null> {
    const reply = (await this.#store.runScript('sessions.touch', TOUCH, [this.#session(hash), this.#prefix], [hash, String(now), String(idleMs)])) as
      [string, string, string, string, string, string] | null;
    if (!reply) return null;
    const [principalId, method, state, c, l, e] = reply;
    return { hash, principalId, method, state: state as SessionState, createdAt: Number(c), lastSeenAt: Number(l), expiresAt: Number(e) };
  }

  async activate(hash: string, expiresAt: number, now: number, idleMs: number): Promise<boolean> {
    return (await this.#store.runScript('sessions.activate', ACTIVATE, [this.#session(hash)], [String(expiresAt), String(now), String(idleMs)])) === 1;
  }

  async end(hash: string): Promise<boolean> {
    return (await this.#store.runScript('sessions.end', END, [this.#session(hash), this.#prefix], [hash])) === 1;
  }

  async endAll(principalId: string): Promise<number> {
    return Number(await this.#store.runScript('sessions.endAll', END_ALL, [this.#index(principalId), this.#prefix], []));
  }
}
