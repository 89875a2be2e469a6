/** The hooks registered by loaded-modules.mjs (they run on Node's loader thread). */
import { appendFileSync } from 'node:fs';

let file = '';

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, next) {
  const loaded = await next(url, context);
  appendFileSync(file, `${url}\n`);
  return loaded;
}
