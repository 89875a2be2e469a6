/**
 * The deny rules' METADATA, checked before a policy is built or served. A deny rule builds its denial from
 * its own `custom` block (code, step, rank, status); a block missing a field, or naming a step the gateway
 * does not enforce, would leave the denial undefined in older policies and the call admitted. The Rego now
 * fails closed on such a rule (code `policy-rule-invalid`), but a rule that always refuses is no more what
 * its author meant than one that never does: the build (scripts/policies-build.mjs), the policy gate, start-up,
 * every reload and `portcullis check` refuse it here, naming the file, line and rule.
 *
 * Read straight from the Rego sources (the wasm carries no annotations): a `# METADATA` comment block
 * directly above a rule head is that rule's, which is how OPA scopes it too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ERRORS, isErrorCode } from '../errors.js';
import { policySources } from './source-hash.js';

/** Steps a policy denial may name: 1 principal, 2 model/route, 3 team requirements, 5 guardrails (4 is the store's). */
export const DENIAL_STEPS: readonly number[] = [1, 2, 3, 5];
/** Lower-kebab-case; `<rung>` is the placeholder the rung rule fills in. */
const CODE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** Every problem with the deny rules of a root's policies/, as `file:line: ...` sentences; empty when sound. */
export function denyRuleProblems(root: string): string[] {
  const problems: string[] = [];
  for (const file of policySources(root)) {
    problems.push(...denyRuleProblemsIn(file, readFileSync(join(root, file), 'utf8')));
  }
  return problems;
}

export function denyRuleProblemsIn(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  let block: string[] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#\s*METADATA\s*$/.test(line)) {
      block = [];
      continue;
    }
    if (block && line.startsWith('#')) {
      block.push(line.replace(/^# ?/, ''));
      continue;
    }
    if (/^deny(\s+contains\b|\s*\[|\s+if\b|\s*:?=)/.test(line)) {
      const where = `${file}:${i + 1}`;
      if (!block) problems.push(`${where}: deny rule has no # METADATA block (custom.code, step and rank are required)`);
      else problems.push(...metadataProblems(where, block.join('\n')));
    }
    block = null;
  }
  return problems;
}

function metadataProblems(where: string, yamlText: string): string[] {
  let meta: unknown;
  try {
    meta = parse(yamlText);
  } catch (err) {
    return [`${where}: deny rule METADATA is not valid YAML: ${(err as Error).message.split('\n')[0]}`];
  }
  const custom = (meta as { custom?: unknown } | null)?.custom as Record<string, unknown> | undefined;
  const code = custom?.code;
  const name = typeof code === 'string' ? `deny rule ${code}` : 'deny rule';
  const out: string[] = [];
  const bad = (what: string) => out.push(`${where}: ${name}: METADATA ${what}`);
  if (!custom || typeof custom !== 'object') return [`${where}: deny rule: METADATA has no custom block (code, step and rank are required)`];
  if (code === undefined) bad('custom.code is missing (a lower-kebab-case error code)');
  else if (typeof code !== 'string' || !CODE.test(code.replace('<rung>', 'rung'))) bad(`custom.code ${JSON.stringify(code)} is not a lower-kebab-case string`);
  if (custom.step === undefined) bad(`custom.step is missing (one of ${DENIAL_STEPS.join(', ')})`);
  else if (!DENIAL_STEPS.includes(custom.step as number))
    bad(`custom.step ${JSON.stringify(custom.step)} is not an admission step (one of ${DENIAL_STEPS.join(', ')})`);
  if (custom.rank === undefined) bad('custom.rank is missing (a positive integer ordering denials within a step)');
  else if (!Number.isInteger(custom.rank) || (custom.rank as number) < 1) bad(`custom.rank ${JSON.stringify(custom.rank)} is not a positive integer`);
  if (custom.status !== undefined) {
    const status = custom.status;
    if (typeof code === 'string' && isErrorCode(code)) {
      // A shipped code answers with the status of the error table (docs/errors.md); a rule cannot change it.
      if (status !== ERRORS[code].status)
        bad(`custom.status ${JSON.stringify(status)} differs from the status of the shipped code ${code} (${ERRORS[code].status})`);
    } else if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 499) {
      bad(`custom.status ${JSON.stringify(status)} is not a 4xx HTTP status`);
    }
  }
  return out;
}
