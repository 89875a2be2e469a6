/**
 * Writes docs/openapi.json, the committed copy of the API host's OpenAPI document (src/openapi). Run it
 * after changing a route, a request schema or the error table: `npm run openapi`. The document test fails
 * while the committed copy is stale.
 */
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../src/openapi/route.js';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
