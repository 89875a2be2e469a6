/**
 * Reading a JSON POST body, for every route that takes one: `content-type: application/json` required
 * (415), at most the given size (413, counted on the bytes actually received so a lying content-length
 * cannot slip past), and valid JSON (400). A POST that needs no body (`readOptionalJson`) needs no
 * content-type either, as long as it sends no bytes.
 */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { GatewayError } from '../errors.js';
import { parseKeepingContents } from '../compat/content-json.js';

export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type] = header.split(';');
  return type!.trim().toLowerCase() === 'application/json';
}

const hasUtf8Bom = (b: Buffer): boolean => b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

export async function readJson(ctx: Context, limitBytes: number): Promise<unknown> {
  if (!isJsonContentType(ctx.get('content-type'))) throw new GatewayError('unsupported-media-type');
  return parseJson(await readBytes(ctx, limitBytes));
}

/**
 * For a POST whose body is optional (nothing to say, or only optional fields): no bytes at all — however the
 * request was framed (no length, `content-length: 0`, or an empty chunked body) and whatever content-type it
 * names or leaves out — is `undefined`; a body that has bytes must be JSON (415 otherwise) as for readJson.
 */
export async function readOptionalJson(ctx: Context, limitBytes: number): Promise<unknown> {
  const framed = ctx.get('transfer-encoding') !== '' || (ctx.get('content-length') !== '' && ctx.get('content-length') !== '0');
  if (!framed) return undefined;
  const bytes = await readBytes(ctx, limitBytes);
  if (bytes.length === 0) return undefined;
  if (!isJsonContentType(ctx.get('content-type'))) throw new GatewayError('unsupported-media-type');
  return parseJson(bytes);
}

async function readBytes(ctx: Context, limitBytes: number): Promise<Buffer> {
  try {
    // Read as bytes and decoded once: raw-body's own decoding (`encoding: 'utf8'`, iconv-lite over a
    // StringDecoder) made a string per chunk and JSON.parse then copied their concatenation flat, 100 KB of
    // garbage on a 100 KB body. The same text: UTF-8 with its byte-order mark dropped, as iconv-lite did.
    return await getRawBody(ctx.req, { limit: limitBytes, length: ctx.get('content-length') || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new GatewayError('payload-too-large', `the body is larger than ${limitBytes} bytes`);
    if (type === 'request.aborted') throw new GatewayError('invalid-request', 'the request body was cut off');
    throw new GatewayError('invalid-request', 'the request body could not be read');
  }
}

/**
 * A body this large may carry a long message content: parsed so that each long content's JSON text is kept
 * for the job id and the upstream body (src/compat/content-json.ts), which then need not serialise it again.
 * The reviver that keeps it costs a few microseconds on a small body, more than it saves there.
 */
const KEEP_CONTENTS_FROM_BYTES = 8 * 1024;

export function parseJson(bytes: Buffer): unknown {
  const raw = (hasUtf8Bom(bytes) ? bytes.subarray(3) : bytes).toString('utf8');
  try {
    return bytes.length >= KEEP_CONTENTS_FROM_BYTES ? parseKeepingContents(raw) : (JSON.parse(raw) as unknown);
  } catch {
    throw new GatewayError('invalid-json');
  }
}
