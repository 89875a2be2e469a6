/**
 * Writes docs/openapi.json, the committed copy of the API host's OpenAPI document (src/openapi): starts a
 * gateway on the repository's configuration (memory store, free ports), reads the document its API listener
 * serves, and stops it. Run it after changing a route, a request schema or the error table:
 * `npm run openapi`. The document test fails while the committed copy is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startGateway } from '../src/server.js';
import { silentLogger } from '../src/log.js';
import { HOST_NAMES } from '../src/config/types.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ports = Object.fromEntries(['PORT', ...HOST_NAMES.map((h) => `PORTCULLIS_${h.toUpperCase()}_PORT`)].map((n) => [n, '0']));
const gw = await startGateway({ root, env: { ...process.env, ...ports, REDIS_URL: '', PORTCULLIS_ADMIN_TOKEN: 'openapi-script' }, log: silentLogger });
try {
  const doc = await (await fetch(`${gw.apiUrl}/openapi.json`)).json();
  const target = new URL('../docs/openapi.json', import.meta.url);
  writeFileSync(target, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`wrote ${target.pathname}\n`);
} finally {
  await gw.close();
}
