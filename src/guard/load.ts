/**
 * Loading `rules/guardrails.yaml` on its own (tools, tests, the benchmark): the same strict reader as every
 * other configuration document (config/documents.ts) - YAML with duplicate keys rejected, then the schema
 * beside the file (`guardrails.schema.json`, `additionalProperties: false` throughout). Problems are thrown
 * as a ConfigError whose lines name the file and the JSON path (`rules/guardrails.yaml: /rules/2/action ...`).
 */
import { basename, dirname } from 'node:path';
import { loadDocument } from '../config/documents.js';
import type { GuardrailsDoc } from './types.js';

export function loadGuardrailsDoc(path: string): GuardrailsDoc {
  return loadDocument<GuardrailsDoc>(dirname(path), basename(path)).data;
}
