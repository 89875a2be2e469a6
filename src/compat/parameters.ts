/**
 * The chat-completions parameter table (rules/chat-parameters.yaml): for every field of OpenAI's request,
 * forwarded, honoured, dropped or refused. Loaded and compiled once; `checkParameters` applies it to a body
 * before its shape is checked, so a refused or unknown field is answered with its own code, the field named
 * as `param` (where OpenAI's clients read it) and a message saying what to do instead.
 *
 * The table is product behaviour, not deployment config: it ships with the code that implements it, so it
 * is read from the package's own rules/ folder, not from an operator's configuration root.
 * `chatParameterTable()` is the served form (docs, the control-plane profile).
 */
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { loadDocument } from '../config/documents.js';
import { GatewayError, isErrorCode, type ErrorCode } from '../errors.js';

export type Treatment = 'forwarded' | 'honoured' | 'dropped' | 'refused';

export interface ParameterRow {
  name: string;
  treatment: Treatment;
  accepts?: object;
  refused?: { code: string; instead: string };
  gateway?: boolean;
  note?: string;
}

export interface ParameterTableDoc {
  version: string;
  unknown: { treatment: 'refused'; code: string; why: string };
  parameters: ParameterRow[];
}

/** What a parameter name looks like; anything else is not repeated back. */
export const PARAMETER_NAME = /^[a-z][a-z0-9_]{0,63}$/;

const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PARAMETER_TABLE_FILE = 'rules/chat-parameters.yaml';

interface CompiledRow extends ParameterRow {
  check?: ValidateFunction;
}

function errorCode(code: string, where: string): ErrorCode {
  if (!isErrorCode(code)) throw new Error(`${PARAMETER_TABLE_FILE}: ${where} names error code "${code}", which src/errors.ts lacks`);
  return code;
}

/** Compiles a table document; throws when a row names an unknown error code or repeats a field. */
export function compileParameterTable(doc: ParameterTableDoc): ReadonlyMap<string, CompiledRow> {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  const rows = new Map<string, CompiledRow>();
  errorCode(doc.unknown.code, 'unknown');
  for (const row of doc.parameters) {
    if (rows.has(row.name)) throw new Error(`${PARAMETER_TABLE_FILE}: parameter "${row.name}" appears twice`);
    if (row.refused) errorCode(row.refused.code, row.name);
    rows.set(row.name, { ...row, ...(row.accepts ? { check: ajv.compile(row.accepts) } : {}) });
  }
  return rows;
}

const loaded = loadDocument<ParameterTableDoc>(PACKAGE_ROOT, PARAMETER_TABLE_FILE);
const DOC = loaded.data;
const ROWS = compileParameterTable(DOC);

/** The table as served: version, the rule for unknown fields, and one row per field. */
export function chatParameterTable(): { version: string; sha256: string; unknown: ParameterTableDoc['unknown']; parameters: ParameterRow[] } {
  return structuredClone({ version: DOC.version, sha256: loaded.sha256, unknown: DOC.unknown, parameters: DOC.parameters });
}

/**
 * Refuses what the table refuses: a field it does not list, a `refused` field, or a value outside a row's
 * `accepts`. Fields the table forwards or honours have their shape checked afterwards by the chat schema.
 */
export function checkParameters(body: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(body)) {
    const row = ROWS.get(name);
    if (!row) {
      // Echoed only when it looks like a parameter name: a key could be anything the client pasted, a secret too.
      const shown = PARAMETER_NAME.test(name) ? name : undefined;
      throw new GatewayError(
        errorCode(DOC.unknown.code, 'unknown'),
        `${shown ? `unknown parameter "${shown}"` : 'an unknown parameter'}: the gateway does not offer it (see the parameter table in docs/clients.md)`,
        shown ? { param: shown } : {},
      );
    }
    if (!row.refused) continue;
    const refused = row.treatment === 'refused' ? !row.check?.(value) : row.check !== undefined && !row.check(value);
    if (refused) throw new GatewayError(errorCode(row.refused.code, name), `${name}: ${row.refused.instead}`, { param: name });
  }
}
