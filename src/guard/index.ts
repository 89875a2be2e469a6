/**
 * Guardrails: detectors that read a chat request and report findings, and the filter that masks secrets.
 * Compiled once from `rules/guardrails.yaml` (compileGuardrails), used per request through the Guardrails
 * interface: `scan` (findings), `redact` (a masked copy), `maskOutput` and `maskMessage` (the upstream's answer).
 *
 * Mask format: `[REDACTED:<kind>]`, kind a secret kind (types.ts SECRET_KINDS) or an operator pattern's name
 * (the template is the `mask` of the secrets detector or of the pattern in the rules file).
 */
export { compileGuardrails } from './compile.js';
export { loadGuardrailsDoc } from './load.js';
export { lexicalClassifier, LexicalMatcher, lexicalWords } from './lexical.js';
export { normalise, originalSpan } from './normalise.js';
export { ClassifierError } from './types.js';
export { buildClassifiers, type ExternalClassifiers } from './external.js';
export { moderationClassifier, type ModerationOptions } from './moderation.js';
export type { ChatLike, Classifier, Guardrails, GuardrailsDoc, ScanResult, SecretKind } from './types.js';
