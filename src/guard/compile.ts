/**
 * Compiling: the rules document (plain data) becomes the Guardrails runtime - term tries and secret
 * scanners built once, when the configuration is compiled, never per request. A document that cannot be
 * compiled throws here, so a bad edit never replaces a working runtime.
 *
 * Per request the work is: collect the texts (slots.ts), normalise each once, run one secret pass per text
 * plus one over the joined texts around each boundary (for secrets split across two texts), split all texts
 * into words once and walk the lexical trie and the intent detectors' topic trie over those same words. The
 * secret pass uses the union of every secrets detector's kinds and decoders; each detector then keeps the
 * hits it asked for.
 *
 * What a finding means is decided elsewhere (the admission policy); `redact` masks what redact-action
 * secret detectors found, and the block and flag actions only ever produce findings.
 */
import { IntentDetectors, type FirstPass, type IntentDetectorSpec } from './intent-detectors.js';
import type { IntentModel } from './model/intent-model.js';
import { fillStream, LexicalMatcher, type LexicalDetectorSpec } from './lexical.js';
import { WordStream } from './words.js';
import { applyMasks, type Span } from './mask.js';
import { compilePattern, findPatternHits, type OperatorPattern } from './patterns.js';
import { normalise, originalSpan, type Normalised } from './normalise.js';
import { boundaryPass, type Push } from './boundaries.js';
import { withEchoes } from './echoes.js';
import { compiledScanner } from './compiled.js';
import { findSecrets, type SecretScanOptions } from './secrets.js';
import { collectSlots, type Slot } from './slots.js';
import {
  ClassifierError,
  type Action,
  type ClassifierFailure,
  type ChatLike,
  type Classifier,
  type Decoder,
  type Finding,
  type Guardrails,
  type GuardrailsDoc,
  type ScanResult,
  type SecretKind,
  type Via,
} from './types.js';

export interface CompileGuardrailsOptions {
  /** External classifiers (a moderation endpoint) run by `classify`, after the built-in detectors. */
  classifiers?: readonly Classifier[];
  /** The multilingual intent model (model/intent-model.ts): when given, `classify` lets it decide the intent rules. */
  intentModel?: IntentModel;
  /**
   * Which engine runs the per-character passes (compiled.ts): 'compiled' (the default) the WebAssembly
   * scanner, 'typescript' the reference it is tested against. Findings are the same.
   */
  engine?: 'compiled' | 'typescript';
}

interface SecretsDetector {
  rule: string;
  /** The rule's position in the file: the order of markers where two rules mask the same text. */
  order: number;
  action: Action;
  id: string;
  kinds: ReadonlySet<SecretKind>;
  decoders: ReadonlySet<Decoder>;
  boundaries: boolean;
  mask: string;
}

/** Operator redaction patterns of one detector (patterns.ts). */
interface PatternsDetector {
  rule: string;
  order: number;
  action: Action;
  id: string;
  patterns: OperatorPattern[];
}

/** A match of an operator pattern in one slot, in that slot's ORIGINAL coordinates. */
interface SlotPatternHit {
  slot: number;
  detector: number;
  pattern: number;
  start: number;
  end: number;
}

/** A secret found in one slot, in that slot's ORIGINAL coordinates. */
interface SlotSecret {
  slot: number;
  kind: SecretKind;
  start: number;
  end: number;
  via?: Via;
}

/**
 * What the rules file's schema (rules/guardrails.schema.json, applied when the file is read) cannot say:
 * names unique across the whole file, and the pairings of an action with what can honour it. The shapes
 * themselves (ids, actions, detector kinds, secret kinds, decoders, term lists) are the schema's alone.
 */
function checkDoc(doc: GuardrailsDoc): void {
  const ruleIds = new Set<string>();
  const detectorIds = new Set<string>();
  for (const rule of doc.rules) {
    if (ruleIds.has(rule.id)) throw new Error(`guardrails: rule "${rule.id}" is defined twice`);
    ruleIds.add(rule.id);
    for (const d of rule.detectors) {
      if (detectorIds.has(d.id)) throw new Error(`rule ${rule.id}: detector id "${d.id}" is used twice`);
      detectorIds.add(d.id);
      // Masking words would change the prompt's meaning; lexical detectors block or flag.
      if (d.kind === 'lexical' && rule.action === 'redact') throw new Error(`rule ${rule.id}: lexical detector ${d.id} cannot redact`);
      // The scorer decides whether to refuse; masking or merely flagging a request's intent is not its job.
      if (d.kind === 'intent' && rule.action !== 'block') throw new Error(`rule ${rule.id}: intent detector ${d.id} belongs to a block rule`);
      if (d.kind === 'patterns') {
        const names = new Set<string>();
        for (const p of d.patterns ?? []) {
          if (names.has(p.name)) throw new Error(`rule ${rule.id}: detector ${d.id}: pattern name "${p.name}" is used twice`);
          names.add(p.name);
        }
      }
    }
  }
  const classifierIds = new Set<string>();
  for (const c of doc.classifiers ?? []) {
    if (classifierIds.has(c.id) || detectorIds.has(c.id)) throw new Error(`classifier id "${c.id}" is used twice`);
    classifierIds.add(c.id);
    // Failing open or closed is never guessed: a classifier built in code (no schema read it) states it too.
    if (typeof c.failClosed !== 'boolean') throw new Error(`classifier ${c.id}: failClosed must be stated (true or false)`);
    for (const [category, target] of Object.entries(c.categories ?? {})) {
      const ruleId = typeof target === 'string' ? target : target.rule;
      const rule = doc.rules.find((r) => r.id === ruleId);
      if (!rule) throw new Error(`classifier ${c.id}: category "${category}" names unknown rule "${ruleId}"`);
      // A classifier names a text, not a span in it: it can refuse or flag a call, never mask part of it.
      if (rule.action === 'redact')
        throw new Error(`classifier ${c.id}: category "${category}" names redact rule "${ruleId}"; a classifier can only block or flag`);
    }
  }
}

function sortFindings(findings: Finding[], order: ReadonlyMap<string, number>): Finding[] {
  return findings.sort((a, b) => (order.get(a.where) ?? 0) - (order.get(b.where) ?? 0) || a.rule.localeCompare(b.rule) || a.detector.localeCompare(b.detector));
}

function result(findings: Finding[], order: ReadonlyMap<string, number>): ScanResult {
  return { findings: sortFindings(findings, order), ruleIds: [...new Set(findings.map((f) => f.rule))].sort() };
}

export function compileGuardrails(doc: GuardrailsDoc, options: CompileGuardrailsOptions = {}): Guardrails {
  checkDoc(doc);
  const lexicalSpecs: LexicalDetectorSpec[] = [];
  const intentSpecs: IntentDetectorSpec[] = [];
  const secrets: SecretsDetector[] = [];
  const patternDetectors: PatternsDetector[] = [];
  for (const [order, rule] of doc.rules.entries()) {
    for (const [di, d] of rule.detectors.entries()) {
      if (d.kind === 'lexical') lexicalSpecs.push({ rule: rule.id, action: rule.action, id: d.id, any: d.any ?? [], near: d.near ?? [] });
      else if (d.kind === 'intent') intentSpecs.push({ ...d, rule: rule.id, action: rule.action });
      else if (d.kind === 'patterns') {
        // Each pattern is compiled with RE2 semantics and checked against its test string, or the file is refused.
        const patterns = d.patterns.map((p, pi) => compilePattern(p, `/rules/${order}/detectors/${di}/patterns/${pi}`));
        patternDetectors.push({ rule: rule.id, order, action: rule.action, id: d.id, patterns });
      } else {
        secrets.push({
          rule: rule.id,
          order,
          action: rule.action,
          id: d.id,
          kinds: new Set(d.kinds),
          decoders: new Set(d.decode),
          boundaries: d.boundaries,
          mask: d.mask,
        });
      }
    }
  }
  const lexical = new LexicalMatcher(lexicalSpecs);
  const compiled = options.engine === 'typescript' ? undefined : compiledScanner();
  const intent = new IntentDetectors(intentSpecs, compiled);
  const union: SecretScanOptions = {
    kinds: new Set(secrets.flatMap((s) => [...s.kinds])),
    decoders: new Set(secrets.flatMap((s) => [...s.decoders])),
    ...(compiled ? { passes: compiled } : {}),
  };
  const anyBoundaries = secrets.some((s) => s.boundaries);
  const redactors = secrets.filter((s) => s.action === 'redact');
  const anyRedacting = redactors.length > 0 || patternDetectors.some((d) => d.action === 'redact');
  const external = [...(options.classifiers ?? [])];
  // The words of the request being scanned, reused from scan to scan (scan is synchronous; reset after each).
  const words = new WordStream();
  const normaliseText = compiled ? (text: string) => compiled.normalise(text) : normalise;

  /** Secrets in every slot, in original coordinates; split secrets appear once per slot they touch. */
  function findSlotSecrets(slots: readonly Slot[], norm: readonly Normalised[]): SlotSecret[] {
    const out: SlotSecret[] = [];
    if (union.kinds.size === 0) return out;
    const push: Push = (slot, hit, start, end) => {
      if (end <= start) return;
      const n = norm[slot]!;
      let [s, e] = originalSpan(n, start, end);
      if (hit.via === 'split') {
        // A split's part that runs to its text's end (from its start) also takes the lone half of a surrogate
        // pair the boundary cut there: half of one of the key's characters, which normalises to nothing.
        const last = n.original.charCodeAt(n.original.length - 1);
        if (end === n.text.length && e === n.original.length - 1 && last >= 0xd800 && last <= 0xdbff) e++;
        const first = n.original.charCodeAt(0);
        if (start === 0 && s === 1 && first >= 0xdc00 && first <= 0xdfff) s = 0;
      }
      out.push({ slot, kind: hit.kind, start: s, end: e, ...(hit.via ? { via: hit.via } : {}) });
    };
    // The texts' searches are kept for the boundary pass, which reads the texts joined.
    const opts: SecretScanOptions = anyBoundaries && norm.length > 1 && union.passes ? { ...union, searched: [] } : union;
    norm.forEach((n, slot) => {
      for (const h of findSecrets(n.text, opts, slot)) push(slot, h, h.start, h.end);
    });
    if (anyBoundaries) {
      // Texts in the order the model reads them; and message contents alone, so that a secret split between
      // a message and a tool result is joined even with the tool call's arguments between them. Names, JSON
      // keys and tool definitions are read alone, never joined: a key is not split into them, and joining
      // them read a tool's schema (`parameters`, `type`, `object`) or the next call's name as more of the key
      // before it, so masking broke the schema or refused the call.
      const all = norm.map((_, i) => i).filter((i) => !slots[i]!.identifier && !slots[i]!.key && !slots[i]!.definition);
      boundaryPass(norm, all, opts, push);
      const contents = all.filter((i) => slots[i]!.content);
      if (contents.length !== all.length) boundaryPass(norm, contents, opts, push);
    }
    return out;
  }

  function secretFindings(slots: readonly Slot[], found: readonly SlotSecret[]): Finding[] {
    const findings: Finding[] = [];
    const seen = new Set<string>();
    for (const d of secrets) {
      for (const s of found) {
        if (!d.kinds.has(s.kind)) continue;
        if (s.via === 'split' ? !d.boundaries : s.via !== undefined && !d.decoders.has(s.via)) continue;
        const detector = `${d.id}:${s.kind}`;
        const where = slots[s.slot]!.where;
        const key = `${d.rule}\u0000${detector}\u0000${where}\u0000${s.via ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        findings.push({ rule: d.rule, action: d.action, detector, where, ...(s.via ? { via: s.via } : {}) });
      }
    }
    return findings;
  }

  /** Operator pattern matches in every slot, in original coordinates. */
  function findSlotPatterns(norm: readonly Normalised[]): SlotPatternHit[] {
    const out: SlotPatternHit[] = [];
    if (patternDetectors.length === 0) return out;
    norm.forEach((n, slot) => {
      patternDetectors.forEach((d, detector) => {
        for (const h of findPatternHits(n.text, d.patterns)) {
          const [start, end] = originalSpan(n, h.start, h.end);
          out.push({ slot, detector, pattern: h.pattern, start, end });
        }
      });
    });
    return out;
  }

  function patternFindings(slots: readonly Slot[], hits: readonly SlotPatternHit[]): Finding[] {
    const findings: Finding[] = [];
    const seen = new Set<string>();
    for (const h of hits) {
      const d = patternDetectors[h.detector]!;
      const detector = `${d.id}:${d.patterns[h.pattern]!.name}`;
      const where = slots[h.slot]!.where;
      const key = `${d.rule}\u0000${detector}\u0000${where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      findings.push({ rule: d.rule, action: d.action, detector, where });
    }
    return findings;
  }

  function analyse(req: ChatLike) {
    const collected = collectSlots(req);
    const norm = collected.slots.map((s) => normaliseText(s.text));
    // Each found value's other exact occurrences in the request too (echoes.ts): a shared stage after either
    // engine's findings, so both report and mask alike.
    const found = withEchoes(
      collected.slots.map((s) => s.text),
      findSlotSecrets(collected.slots, norm),
    );
    const patterned = findSlotPatterns(norm);
    return { collected, norm, found, patterned };
  }

  function whereOrder(slots: readonly Slot[]): Map<string, number> {
    const order = new Map<string, number>();
    slots.forEach((s, i) => {
      if (!order.has(s.where)) order.set(s.where, i);
    });
    return order;
  }

  function scanDetail(req: ChatLike): { result: ScanResult; first: FirstPass; slots: readonly Slot[]; norm: readonly Normalised[] } {
    const { collected, norm, found, patterned } = analyse(req);
    const slots = collected.slots;
    const findings = [...secretFindings(slots, found), ...patternFindings(slots, patterned)];
    const texts = slots.map((s, i) => ({ where: s.where, text: norm[i]!.text }));
    let first: FirstPass = { findings: [], spots: [], top: 0 };
    if (lexicalSpecs.length > 0 || intent.size > 0) {
      // One tokenisation of the request for both word readers (it was half of a large request's scan).
      try {
        // Compiled: the words, both term lists' hits and the squeezed reading of the block terms in one call
        // to the module; the findings are built from them here, as from the reference's.
        const lexicalOn = lexicalSpecs.length > 0 ? lexical : undefined;
        const topicsOn = intent.size > 0 ? intent.topics : undefined;
        const found = compiled?.readWords(words, texts, { lexical: lexicalOn, topics: topicsOn, squeezed: lexicalOn?.squeezed });
        if (!compiled) fillStream(words, texts);
        if (lexicalOn) findings.push(...lexicalOn.matchStream(texts, words, found && { words: found.lexical, squeezed: found.squeezed }));
        if (topicsOn) findings.push(...(first = intent.firstPass(texts, words, found?.topics)).findings);
      } finally {
        words.reset();
      }
    }
    return { result: result(findings, whereOrder(slots)), first, slots, norm };
  }

  function scan(req: ChatLike): ScanResult {
    return scanDetail(req).result;
  }

  /** The slot of the last user message's content, if any (the model also reads that turn on its own). */
  function lastUserSlot(req: ChatLike, slots: readonly Slot[]): number | undefined {
    for (let mi = req.messages.length - 1; mi >= 0; mi--) {
      if (req.messages[mi]!.role !== 'user') continue;
      const i = slots.findIndex((s) => s.where === `messages[${mi}].content`);
      return i >= 0 ? i : undefined;
    }
    return undefined;
  }

  /** `scan`, with the intent rules decided by the intent model when one is configured and reads the call. */
  async function scanWithModel(req: ChatLike, team: 'red' | 'blue', cacheScope: string): Promise<ScanResult> {
    const detail = scanDetail(req);
    const model = options.intentModel;
    if (!model || intent.size === 0) return detail.result;
    const { slots, norm, first } = detail;
    const offsetOf = (i: number, off: number) => norm[i]!.starts?.[Math.min(off, norm[i]!.starts.length - 1)] ?? off;
    const verdict = await model.decide(
      team,
      slots.map((s) => ({ where: s.where, text: s.text })),
      first,
      offsetOf,
      intent.classes,
      lastUserSlot(req, slots),
      cacheScope,
    );
    if (!verdict.read) return detail.result;
    if (verdict.failure) return { ...detail.result, failures: [verdict.failure] };
    const firstPass = new Set(first.findings);
    const kept = detail.result.findings.filter((f) => !firstPass.has(f));
    return result([...kept, ...verdict.findings], whereOrder(slots));
  }

  /**
   * The spans redact-action detectors mask, per slot: one span per redact rule that found the text (each with
   * its own mask), so that where two rules matched, both markers show - as both findings do.
   */
  function maskPlan(found: readonly SlotSecret[], patterned: readonly SlotPatternHit[]): Map<number, Span[]> {
    const plan = new Map<number, Span[]>();
    const add = (slot: number, span: Span) => {
      const spans = plan.get(slot);
      if (spans) spans.push(span);
      else plan.set(slot, [span]);
    };
    for (const s of found) {
      const rules = new Set<string>();
      for (const d of redactors) {
        if (rules.has(d.rule) || !d.kinds.has(s.kind)) continue;
        if (!(s.via === 'split' ? d.boundaries : s.via === undefined || d.decoders.has(s.via))) continue;
        rules.add(d.rule);
        add(s.slot, { start: s.start, end: s.end, kind: s.kind, rule: d.order, template: d.mask });
      }
    }
    for (const h of patterned) {
      const d = patternDetectors[h.detector]!;
      if (d.action !== 'redact') continue;
      const p = d.patterns[h.pattern]!;
      add(h.slot, { start: h.start, end: h.end, kind: p.name, rule: d.order, template: p.mask });
    }
    return plan;
  }

  function redact<T extends ChatLike>(req: T): { request: T; masked: number } {
    const { collected, found, patterned } = analyse(req);
    const replacements = new Map<number, string>();
    let masked = 0;
    for (const [slot, spans] of maskPlan(found, patterned)) {
      const r = applyMasks(collected.slots[slot]!.text, spans);
      replacements.set(slot, r.text);
      masked += r.masked;
    }
    return { request: collected.rebuild(req, replacements), masked };
  }

  function maskOutput(text: string): { text: string; masked: number } {
    if (!anyRedacting || text === '') return { text, masked: 0 };
    // The answer is one text, or (tool-call arguments) one JSON value whose strings are the texts.
    const probe = { messages: [{ role: 'assistant', tool_calls: [{ function: { name: '', arguments: text } }] }] };
    const { request, masked } = redact(probe);
    return masked === 0 ? { text, masked } : { text: request.messages[0]!.tool_calls[0]!.function.arguments, masked };
  }

  function maskMessage<M extends ChatLike['messages'][number]>(message: M): M {
    if (!anyRedacting) return message;
    const { request, masked } = redact({ messages: [message] });
    return masked === 0 ? message : request.messages[0]!;
  }

  async function classify(req: ChatLike, context: { team?: 'red' | 'blue'; cacheScope?: string } = {}): Promise<ScanResult> {
    const base = await scanWithModel(req, context.team ?? 'red', context.cacheScope ?? '');
    if (external.length === 0) return base;
    // An external classifier is another party: it reads the request as the upstream will, with the redact
    // rules' masks applied, so a live credential never leaves the gateway through it either.
    const seen = anyRedacting ? redact(req).request : req;
    const { slots } = collectSlots(seen);
    const texts = slots.map((s) => ({ where: s.where, text: s.text }));
    const settled = await Promise.allSettled(external.map((c) => c.classify(texts)));
    const more: Finding[] = [];
    const failures: ClassifierFailure[] = [];
    settled.forEach((s, i) => {
      const c = external[i]!;
      if (s.status === 'fulfilled') more.push(...s.value);
      else failures.push({ classifier: c.id, failClosed: c.failClosed ?? true, reason: s.reason instanceof ClassifierError ? s.reason.reason : 'error' });
    });
    const out = result([...base.findings, ...more], whereOrder(slots));
    failures.unshift(...(base.failures ?? []));
    return failures.length > 0 ? { ...out, failures } : out;
  }

  return Object.freeze({ version: doc.version, scan, classify, redact, maskOutput, maskMessage });
}
