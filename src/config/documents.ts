/**
 * Reading one versioned YAML document strictly: YAML parse errors, duplicate keys and schema violations
 * (unknown keys included, since every schema says `additionalProperties: false`) all become a ConfigError
 * naming the file and the JSON path, so an operator can find the line to fix.
 *
 * Each document's schema sits beside it (`models.yaml` -> `models.schema.json`), except config/gateway.yaml's,
 * which the code declares (gateway-schema.ts; the file beside it is written from that). Compiled validators
 * are cached per schema so a reload does not recompile them.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';

/** Every problem found in the configuration, each naming its file and path. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`configuration is invalid:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A document as loaded: its data, its version, and the hash a reviewer can check it by. */
export interface LoadedDocument<T> {
  file: string; // path relative to the configuration root
  version: string;
  sha256: string;
  data: T;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
const validators = new Map<string, ValidateFunction>();

function validatorFor(schemaPath: string, given?: () => Record<string, unknown>): ValidateFunction {
  const cacheKey = given ? `code:${schemaPath}` : schemaPath;
  let validate = validators.get(cacheKey);
  if (!validate) {
    const schema = (given ? given() : JSON.parse(readFileSync(schemaPath, 'utf8'))) as { $id?: string };
    // Schemas carry an $id; a reload re-reads the same file, so drop the old copy before compiling again.
    if (schema.$id) ajv.removeSchema(schema.$id);
    validate = ajv.compile(schema);
    validators.set(cacheKey, validate);
  }
  return validate;
}

/** A branch of a oneOf/anyOf refused on a constant property (`kind: memory` against the Redis branch). */
const BRANCH_CONST = /^(.*\/(?:oneOf|anyOf))\/(\d+)\/properties\/[^/]+\/const$/;

/**
 * The errors of the branch the document chose, when a oneOf's branches are told apart by a constant
 * (`store.kind`): the other branches' errors only say "not this kind" (`unknown key "url"`, `kind must be
 * equal to constant`), so they and the oneOf's own summary go, provided some branch that passed the constant
 * has errors of its own to show. A constant that matches no branch keeps every error.
 */
function chosenBranchErrors(errors: ErrorObject[]): ErrorObject[] {
  const refused = new Map<string, Set<string>>(); // oneOf path -> branch indexes refused on a constant
  for (const e of errors) {
    const m = e.keyword === 'const' ? BRANCH_CONST.exec(e.schemaPath) : null;
    if (m) refused.set(m[1]!, (refused.get(m[1]!) ?? new Set()).add(m[2]!));
  }
  let kept = errors;
  for (const [parent, branches] of refused) {
    const branchOf = (e: ErrorObject) => (e.schemaPath.startsWith(`${parent}/`) ? e.schemaPath.slice(parent.length + 1).split('/')[0] : undefined);
    const chosenHasErrors = kept.some((e) => {
      const b = branchOf(e);
      return b !== undefined && !branches.has(b);
    });
    if (!chosenHasErrors) continue;
    kept = kept.filter((e) => e.schemaPath !== parent && !branches.has(branchOf(e) ?? ''));
  }
  return kept;
}

/** Readable schema errors: `catalog/models.yaml: /models/2/team must be equal to one of the allowed values`. */
export function describeSchemaErrors(file: string, errors: ErrorObject[] | null | undefined): string[] {
  return chosenBranchErrors(errors ?? []).map((e) => {
    const at = e.instancePath || '/';
    if (e.keyword === 'additionalProperties') {
      return `${file}: ${at} has unknown key "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    }
    if (e.keyword === 'const') {
      return `${file}: ${at} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    }
    if (e.keyword === 'enum') {
      return `${file}: ${at} must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
    }
    return `${file}: ${at} ${e.message ?? 'is invalid'}`;
  });
}

/**
 * Reads `<root>/<file>`, parses it as YAML, applies `patch` (environment overrides) and validates the result
 * against `schema` when given, else the schema beside it. Throws ConfigError listing every problem.
 */
export function loadDocument<T>(
  root: string,
  file: string,
  patch?: (data: Record<string, unknown>) => void,
  schema?: () => Record<string, unknown>,
): LoadedDocument<T> {
  const path = join(root, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => `${file}: ${e.message.split('\n')[0]}`));
  }
  const data = doc.toJS() as Record<string, unknown>;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError([`${file}: / must be a mapping`]);
  }
  patch?.(data);
  const schemaPath = join(dirname(path), basename(path).replace(/\.ya?ml$/, '.schema.json'));
  const validate = validatorFor(schemaPath, schema);
  if (!validate(data)) throw new ConfigError(describeSchemaErrors(relative(root, path), validate.errors));
  return {
    file,
    version: String(data['version']),
    sha256: createHash('sha256').update(text).digest('hex'),
    data: data as T,
  };
}
