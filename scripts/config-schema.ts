/**
 * Writes config/gateway.schema.json from the schema the gateway validates its file with
 * (src/config/gateway-schema.ts, assembled from each section's schema beside its code). The file is what an
 * operator's editor reads (the `# yaml-language-server: $schema=` line of config/gateway.yaml) and what the
 * docs point to; test/config/schema-file.test.ts fails when it is not the one this writes.
 *
 *   npx tsx scripts/config-schema.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gatewaySchemaText } from '../src/config/gateway-schema.js';

const target = fileURLToPath(new URL('../config/gateway.schema.json', import.meta.url));
writeFileSync(target, gatewaySchemaText());
console.log(`wrote ${target}`);
