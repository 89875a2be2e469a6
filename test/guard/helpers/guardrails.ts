/**
 * The guardrails compiled from the repository's own rules file, once per test run, and small request
 * builders the suites share.
 */
import { fileURLToPath } from 'node:url';
import { compileGuardrails, loadGuardrailsDoc, type ChatLike, type Guardrails, type ScanResult } from '../../../src/guard/index.js';

export const RULES_DIR = fileURLToPath(new URL('../../../rules/', import.meta.url));
export const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/guard/', import.meta.url));

let compiled: Guardrails | undefined;
export function guardrails(): Guardrails {
  compiled ??= compileGuardrails(loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`));
  return compiled;
}

let reference: Guardrails | undefined;
/** The same rules run by the TypeScript reference scanner alone (the gateway runs the compiled one). */
export function referenceGuardrails(): Guardrails {
  reference ??= compileGuardrails(loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`), { engine: 'typescript' });
  return reference;
}

export const user = (content: string): ChatLike['messages'][number] => ({ role: 'user', content });

export function texts(req: ChatLike): string[] {
  const out: string[] = [];
  for (const m of req.messages) {
    if (typeof m.content === 'string') out.push(m.content);
    for (const tc of m.tool_calls ?? []) out.push(tc.function.arguments);
  }
  for (const t of req.tools ?? []) out.push(JSON.stringify(t));
  return out;
}

export const secretFindings = (r: ScanResult) => r.findings.filter((f) => f.rule === 'secret-hygiene');
export const blockFindings = (r: ScanResult) => r.findings.filter((f) => f.action === 'block');
