/**
 * Sessions as the hosts use them: start one (a new random id, its hash stored, the cookie set), find the
 * caller's (cookie -> hash -> store, restarting its idle clock), end it, end all of a principal's. Lifetimes
 * and the cookie name are read from the live runtime (`sessions` in config/gateway.yaml) on each use, so a
 * reload applies to the next request.
 *
 * The session id is `pcl_ses_` + 256 random bits (base64url): the prefix lets a secret scanner recognise a
 * leaked one. Only its SHA-256 reaches the store; neither ever reaches a log or an error.
 */
import type { Context } from 'koa';
import { createHash, randomBytes } from 'node:crypto';
import type { RuntimeHolder } from '../config/reloader.js';
import type { HostName } from '../config/types.js';
import { cookieScope, setCookie, type CookiePolicy, type CookieScope } from './cookie.js';
import { requireSameOrigin, trustedOrigins } from './same-origin.js';
import type { SessionRecord, SessionState, SessionStore } from './store.js';

export const SESSION_PREFIX = 'pcl_ses_';
const SESSION_SHAPE = /^pcl_ses_[A-Za-z0-9_-]{43}$/;

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/**
 * What the caller's cookie says: no cookie, a cookie naming no live session, or the live session (with
 * whether this request's use of it ended something, see onOwnerActs).
 */
export type CookieSession = { kind: 'none' } | { kind: 'ended' } | { kind: 'live'; session: SessionRecord; ownerActed: boolean };

export class Sessions {
  readonly #store: SessionStore;
  readonly #holder: RuntimeHolder;
  readonly #origins: Record<HostName, string>;
  readonly #trusted: Set<string>;
  readonly #now: () => number;
  /** The cookie's scope, fixed by the origins: computed by the first cookie set (cookie.ts says why not at start). */
  #scope: Promise<CookieScope> | null = null;
  #secondFactor: (principalId: string) => Promise<boolean> = async () => false;
  #ownerActed: (principalId: string, how: string) => Promise<boolean> = async () => false;

  constructor(store: SessionStore, holder: RuntimeHolder, origins: Record<HostName, string>, now: () => number = Date.now) {
    this.#store = store;
    this.#holder = holder;
    this.#origins = origins;
    this.#trusted = trustedOrigins(origins);
    this.#now = now;
  }

  /** Whether a principal owes a second factor after a primary sign-in (wired to TOTP enrolment). */
  requireSecondFactorWhen(check: (principalId: string) => Promise<boolean>): void {
    this.#secondFactor = check;
  }

  /**
   * What to do each time the owner of an account shows up: a sign-in (any method; `how` names it), the
   * second-factor step, or any request a live session makes (`how` = `session`). Wired to ending a pending
   * recovery: the owner's presence is the answer the recovery delay waits for. A session that a recovery
   * itself started does not count as the owner's sign-in. `act` answers whether it ended something.
   */
  onOwnerActs(act: (principalId: string, how: string) => Promise<boolean>): void {
    this.#ownerActed = act;
  }

  get #config() {
    return this.#holder.current.gateway.sessions;
  }

  get store(): SessionStore {
    return this.#store;
  }

  /** The name is read on each use (a reload may change it); the scope once. */
  async #policy(): Promise<CookiePolicy> {
    const scope = await (this.#scope ??= cookieScope(this.#origins));
    return { name: this.#config.cookieName, ...scope };
  }

  /**
   * Starts a session for the principal and sets its cookie on the answer. Without an explicit `state`, a
   * principal with a second factor enrolled gets a `pending-2fa` session that lives `totp.pendingMs`.
   * A session the request's cookie still names is ended first: a sign-in always gets a fresh id (no
   * session fixation) and the cookie it replaces leaves nothing alive behind.
   */
  async start(ctx: Context, principalId: string, method: string, state?: SessionState): Promise<SessionRecord> {
    const { idleMs, absoluteMs } = this.#config;
    const previous = ctx.cookies.get(this.#config.cookieName);
    if (previous && SESSION_SHAPE.test(previous)) await this.#store.end(hashSessionId(previous));
    const id = SESSION_PREFIX + randomBytes(32).toString('base64url');
    const now = this.#now();
    const st: SessionState = state ?? ((await this.#secondFactor(principalId)) ? 'pending-2fa' : 'active');
    const lifetime = st === 'active' ? absoluteMs : this.#holder.current.gateway.totp.pendingMs;
    const record: SessionRecord = { hash: hashSessionId(id), principalId, method, state: st, createdAt: now, lastSeenAt: now, expiresAt: now + lifetime };
    await this.#store.create(record, idleMs);
    ctx.append('set-cookie', setCookie(await this.#policy(), id, absoluteMs));
    if (method !== 'recovery') await this.#ownerActed(principalId, method);
    return record;
  }

  /** Whether the request carries a session cookie at all (no store call). */
  hasCookie(ctx: Context): boolean {
    return Boolean(ctx.cookies.get(this.#config.cookieName));
  }

  /** The session the request's cookie names, its idle clock restarted. */
  async read(ctx: Context): Promise<CookieSession> {
    const id = ctx.cookies.get(this.#config.cookieName);
    if (!id) return { kind: 'none' };
    if (!SESSION_SHAPE.test(id)) return { kind: 'ended' };
    const session = await this.#store.touch(hashSessionId(id), this.#now(), this.#config.idleMs);
    if (!session) return { kind: 'ended' };
    return { kind: 'live', session, ownerActed: await this.#ownerActed(session.principalId, 'session') };
  }

  /** 403 `cross-site-request` unless an unsafe request comes from the auth, console or API origin. */
  requireSameOrigin(ctx: Context): void {
    requireSameOrigin(ctx, this.#trusted);
  }

  /** Clears the cookie on the answer (the session itself is ended with `end`). */
  async clearCookie(ctx: Context): Promise<void> {
    ctx.append('set-cookie', setCookie(await this.#policy(), '', 0));
  }

  async end(session: SessionRecord): Promise<boolean> {
    return this.#store.end(session.hash);
  }

  async endAll(principalId: string): Promise<number> {
    return this.#store.endAll(principalId);
  }

  /** Completes a pending-2fa sign-in: the session becomes active with the full absolute lifetime. */
  async activate(session: SessionRecord): Promise<boolean> {
    const now = this.#now();
    const { idleMs, absoluteMs } = this.#config;
    const activated = await this.#store.activate(session.hash, now + absoluteMs, now, idleMs);
    if (activated) await this.#ownerActed(session.principalId, 'totp');
    return activated;
  }

  now(): number {
    return this.#now();
  }
}
