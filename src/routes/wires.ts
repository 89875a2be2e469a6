/**
 * Wires portcullis does not offer — Anthropic's /v1/messages, OpenAI's /v1/responses and the Gemini wire
 * (/v1beta/models/..., and /v1/models/{model}:generateContent and friends) — answer 405 with a code that
 * points at the one wire we serve, whatever the method.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';

const NOT_OFFERED = [/^\/v1\/messages(\/|$)/, /^\/v1\/responses(\/|$)/, /^\/v1beta(\/|$)/, /^\/v1\/models\/[^/]+:[A-Za-z]+$/];

export function wiresNotOffered() {
  // Not async: it does no I/O, and every call passes through it (an async layer costs a promise per call).
  return function wiresNotOffered(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path;
    for (const re of NOT_OFFERED) if (re.test(path)) throw new GatewayError('wire-not-offered');
    return next();
  };
}
