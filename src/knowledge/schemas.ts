/**
 * The request shapes of the knowledge routes and the graph tools, as JSON Schemas: one source for the HTTP
 * routes' validation, the MCP tools' input schemas and /mcp.json. Query strings arrive as strings, so the
 * HTTP side validates with type coercion (`limit=5` is 5); MCP arguments arrive as JSON and are validated
 * by the same schema. Defaults are filled in by the validator, never restated in a handler.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { NODE_KINDS, type NodeKind } from './evidence.js';

/** A public identifier as the sources write it (CWE-89, CAPEC-66, CVE-2021-44228, T1059.001, M1048, AML.T0051, LLM01, INC-04853). */
const id = { type: 'string', minLength: 1, maxLength: 40, pattern: '^[A-Za-z]{1,5}(?:[.-][A-Za-z]{0,2})?[0-9][0-9.-]*$' } as const;
/** Edge types are lower-case words joined by hyphens (child-of, observed-example, mitigates, ...). */
const edgeTypes = { type: 'array', maxItems: 16, uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z-]{0,39}$' } } as const;

export const knowledgeSearchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['q'],
  properties: {
    q: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '\\S',
      description: 'Words or an identifier to search for (ranked full text, stemmed, prefix-matched).',
    },
    kind: { enum: [...NODE_KINDS], description: 'Only entries of this kind.' },
    limit: { type: 'integer', minimum: 1, maximum: 50, default: 10, description: 'Results per page.' },
    offset: { type: 'integer', minimum: 0, maximum: 1000, default: 0, description: 'Results to skip (pagination).' },
  },
} as const;

export const knowledgeContextSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { ...id, description: 'A public identifier: CWE-89, CAPEC-66, CVE-2021-44228, T1190, M1048, AML.T0051, LLM01, ASI01, INC-04853.' } },
} as const;

export const graphNeighboursSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id,
    types: { ...edgeTypes, description: 'Only follow edges of these types (default: all).' },
    direction: { enum: ['out', 'in', 'both'], default: 'both', description: 'Follow edges leaving the node, entering it, or both.' },
    depth: { type: 'integer', minimum: 1, maximum: 3, default: 1, description: 'How many hops to walk.' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'At most this many nodes in the answer.' },
  },
} as const;

export const graphPathSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: id,
    to: id,
    types: { ...edgeTypes, description: 'Only use edges of these types (default: all).' },
    maxDepth: { type: 'integer', minimum: 1, maximum: 8, default: 6, description: 'The longest path to look for, in edges.' },
  },
} as const;

export interface SearchParams {
  q: string;
  kind?: NodeKind;
  limit: number;
  offset: number;
}
export interface IdParams {
  id: string;
}
export interface NeighboursParams {
  id: string;
  types?: string[];
  direction: 'out' | 'in' | 'both';
  depth: number;
  limit: number;
}
export interface PathParams {
  from: string;
  to: string;
  types?: string[];
  maxDepth: number;
}

const strict = new Ajv({ allErrors: false, strict: true, useDefaults: true });
const coercing = new Ajv({ allErrors: false, strict: true, useDefaults: true, coerceTypes: true });

/** A validator that answers a typed copy of the input, or throws `invalid-knowledge-query` naming the field. */
function reader<T>(schema: object, ajv: Ajv): (input: unknown) => T {
  const check: ValidateFunction = ajv.compile(schema);
  return (input) => {
    const copy = input && typeof input === 'object' && !Array.isArray(input) ? { ...input } : input;
    if (check(copy)) return copy as T;
    const e = check.errors?.[0];
    const field = e?.instancePath
      ? e.instancePath.slice(1).replace(/\//g, '.')
      : ((e?.params as { additionalProperty?: string; missingProperty?: string })?.additionalProperty ??
        (e?.params as { missingProperty?: string })?.missingProperty ??
        'query');
    throw new GatewayError('invalid-knowledge-query', `${field}: ${e?.message ?? 'invalid'}`);
  };
}

/** HTTP query strings (coerced). */
export const readSearchQuery = reader<SearchParams>(knowledgeSearchSchema, coercing);
export const readContextQuery = reader<IdParams>(knowledgeContextSchema, coercing);
/** MCP tool arguments (JSON, not coerced). */
export const readSearchArgs = reader<SearchParams>(knowledgeSearchSchema, strict);
export const readNodeArgs = reader<IdParams>(knowledgeContextSchema, strict);
export const readNeighboursArgs = reader<NeighboursParams>(graphNeighboursSchema, strict);
export const readPathArgs = reader<PathParams>(graphPathSchema, strict);
