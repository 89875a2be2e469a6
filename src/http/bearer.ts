/** The bearer credential of a request (`Authorization: Bearer <token>`), or null when it sends none. */
import type { Context } from 'koa';

export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1]! : null;
}
