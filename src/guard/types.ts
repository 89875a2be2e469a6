/**
 * The guardrail vocabulary: what a request looks like to the detectors, what they report, what the compiled
 * runtime offers, and the shape of `rules/guardrails.yaml` as plain data (checked against
 * `rules/guardrails.schema.json` before it gets here).
 *
 * A Finding names a rule, a detector and a location, never the text that matched: findings travel into
 * policy input, logs and receipts, where a secret or a prompt must never appear.
 */
import type { IntentModelDoc } from './model/intent-model.js';

export type Action = 'block' | 'redact' | 'flag';

/** The parts of an OpenAI chat request the detectors read. Other fields pass through `redact` untouched. */
export interface ChatLike {
  messages: Array<{
    role: string;
    content?: string | null;
    tool_calls?: Array<{ id?: string; type?: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
    name?: string;
    refusal?: string | null;
  }>;
  tools?: unknown[];
  tool_choice?: unknown;
}

/** How a secret reached the detector when it was not written out plainly in one text. */
export type Via =
  'split' | 'base64' | 'hex' | 'percent' | 'unicode-escape' | 'base32' | 'html-entities' | 'octal-escape' | 'char-codes' | 'compressed' | 'reversed' | 'rot13';

export interface Finding {
  rule: string;
  action: Action;
  /** The detector id from the rules file; secret detectors append the secret kind (`credential-shapes:openai-key`). */
  detector: string;
  /** Location in the request, e.g. `messages[2].content`, `messages[3].tool_calls[0].function.arguments`, `tools[1]`. */
  where: string;
  /** Set when the secret was split across texts or encoded; absent for a plain match. */
  via?: Via;
}

export interface ScanResult {
  findings: Finding[];
  /** Unique rule ids that have at least one finding, sorted. */
  ruleIds: string[];
  /** External classifiers that could not answer (`classify` only); absent when every one answered. */
  failures?: ClassifierFailure[];
}

/**
 * An external classifier that could not answer (unreachable, timed out, an error status, a malformed
 * answer). What that means is the classifier's stated failure mode: `failClosed` refuses the call,
 * otherwise the call goes on without its verdict (and the failure is logged). `reason` is short and fixed
 * (`timeout`, `unreachable`, `http 503`, `malformed answer`): never text of the request.
 */
export interface ClassifierFailure {
  classifier: string;
  failClosed: boolean;
  reason: string;
}

/** One text handed to a classifier, with the location findings should name. */
export interface ClassifierText {
  where: string;
  text: string;
}

/**
 * A classifier reads texts and reports findings. The lexical classifier is built in; an external moderation
 * endpoint will implement the same interface (it is asynchronous for that reason) and be passed to
 * `compileGuardrails(doc, { classifiers })`.
 */
export interface Classifier {
  readonly id: string;
  /**
   * What a rejection of `classify` means: true refuses the call, false lets it through without this
   * classifier's verdict. External classifiers state it in the rules file (required, no default); a
   * classifier that leaves it out is treated as failing closed.
   */
  readonly failClosed?: boolean;
  classify(texts: readonly ClassifierText[]): Promise<Finding[]>;
}

/** Thrown by an external classifier that could not answer; `reason` is safe to log (no request text). */
export class ClassifierError extends Error {
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`classifier failed: ${reason}`, options);
    this.name = 'ClassifierError';
    this.reason = reason;
  }
}

export interface Guardrails {
  /** `version:` of the rules file the runtime was compiled from. */
  readonly version: string;
  /** Runs every built-in detector over the request; synchronous, no I/O. */
  scan(req: ChatLike): ScanResult;
  /**
   * `scan` plus the intent model (when configured; it decides the intent rules of the calls it reads, and
   * reads every call of `team: 'red'`, the default) and every external classifier given at compile time.
   * `cacheScope` is whose calls may share the model's cached embeddings (the principal's id on the chat
   * path): a reading one caller sent is never a cache hit, and so never faster, for another.
   */
  classify(req: ChatLike, context?: { team?: 'red' | 'blue'; cacheScope?: string }): Promise<ScanResult>;
  /**
   * A new request with the secrets of redact-action rules masked in message contents, tool-call arguments,
   * tool results and tool definitions. The input is never mutated. `masked` counts masked spans (a secret
   * split across two texts counts once per text).
   */
  redact<T extends ChatLike>(req: T): { request: T; masked: number };
  /** Masks secrets in text the upstream produced (answer content or tool-call arguments). */
  maskOutput(text: string): { text: string; masked: number };
  /**
   * One message of the upstream's answer with its secrets masked, its texts read as a request's are (content,
   * refusal, each tool call's name and arguments, in order, joined where a key may be split); names are
   * masked too, as the answer's are. The input is never mutated.
   */
  maskMessage<M extends ChatLike['messages'][number]>(message: M): M;
}

// ---- rules/guardrails.yaml as plain data -------------------------------------------------------------

export const SECRET_KINDS = [
  'openai-key',
  'aws-access-key-id',
  'private-key',
  'anthropic-key',
  'github-token',
  'gitlab-token',
  'npm-token',
  'pypi-token',
  'slack-token',
  'stripe-key',
  'google-api-key',
  'huggingface-token',
  'sendgrid-key',
  'generic-secret',
  'url-password',
  'connection-string',
  'jwt',
  'aws-secret-key',
  'password',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export const DECODERS = [
  'base64',
  'hex',
  'percent',
  'unicode-escape',
  'base32',
  'html-entities',
  'octal-escape',
  'char-codes',
  'compressed',
  'reversed',
  'rot13',
] as const;
export type Decoder = (typeof DECODERS)[number];

/** Terms: words or phrases matched on whole words of normalised text; a trailing `*` makes the last word a prefix. */
export interface NearDoc {
  /** Largest distance, in words, between the first words of the matched terms. */
  within: number;
  /** Named term sets; a match needs one term of every set inside the window. */
  sets: Record<string, string[]>;
}

export interface LexicalDetectorDoc {
  id: string;
  kind: 'lexical';
  description?: string;
  /** Any one of these terms is a finding. */
  any?: string[];
  near?: NearDoc[];
}

export interface SecretsDetectorDoc {
  id: string;
  kind: 'secrets';
  description?: string;
  kinds: SecretKind[];
  /** Encodings whose runs are decoded and scanned; a secret found inside masks the whole encoded run. */
  decode: Decoder[];
  /** Also scan across the boundary of adjacent texts (a secret split across two messages). */
  boundaries: boolean;
  /** Replacement text; `{kind}` is replaced by the secret kind. */
  mask: string;
}

/**
 * The block rules' decision: the intent model (src/guard/intent.ts) reads the request and the detector
 * fires when the probability of its class reaches `threshold`. `topics` (terms, as in lexical detectors)
 * are the prefilter: the model runs only when one occurs.
 */
export interface IntentDetectorDoc {
  id: string;
  kind: 'intent';
  description?: string;
  /** File name of the model in rules/ (written by scripts/train-guard-intent.ts). */
  model: string;
  /** The model's class this detector fires on. */
  class: string;
  threshold: number;
  topics: string[];
}

/** One operator redaction pattern (RE2 syntax; see patterns.ts). */
export interface PatternDoc {
  name: string;
  pattern: string;
  caseInsensitive?: boolean;
  /** Replacement text; `{kind}` is replaced by the pattern's name. */
  mask: string;
  /** A text the pattern must match; checked when the rules are compiled. */
  test: string;
}

export interface PatternsDetectorDoc {
  id: string;
  kind: 'patterns';
  description?: string;
  patterns: PatternDoc[];
}

export type DetectorDoc = LexicalDetectorDoc | SecretsDetectorDoc | IntentDetectorDoc | PatternsDetectorDoc;

export interface RuleDoc {
  id: string;
  action: Action;
  description: string;
  detectors: DetectorDoc[];
}

/** A category of the classifier's answer -> the rule a hit is a finding of (a block or flag rule). */
export type CategoryMapDoc = Record<string, string | { rule: string; minScore: number }>;

/**
 * An OpenAI-compatible moderation endpoint (`POST <url>` with `{input: [...]}`, answering
 * `{results: [{categories, category_scores}]}`), asked once per request with every text of the request,
 * the redact rules' masks applied first.
 */
export interface ModerationClassifierDoc {
  id: string;
  kind: 'moderation';
  description?: string;
  /** The full endpoint URL, e.g. https://api.openai.com/v1/moderations. */
  url: string;
  /** The environment variable holding the API key (sent as a Bearer token); none when absent. */
  apiKeyEnv?: string;
  /** Sent as `model` when set. */
  model?: string;
  /** The whole exchange, connection included; past it the classifier has failed. */
  timeoutMs: number;
  /** Required, no default: true refuses the call when the classifier fails, false admits it (logged). */
  failClosed: boolean;
  categories: CategoryMapDoc;
}

export type ClassifierDoc = ModerationClassifierDoc;

export interface GuardrailsDoc {
  version: string;
  description?: string;
  normalisation?: string;
  rules: RuleDoc[];
  /** External classifiers, asked after the built-in detectors (`Guardrails.classify`). */
  classifiers?: ClassifierDoc[];
  /** The multilingual intent model (model/intent-model.ts); absent: the word-feature scorer decides. */
  intentModel?: IntentModelDoc;
}
