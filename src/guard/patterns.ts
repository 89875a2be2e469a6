/**
 * Operator redaction patterns (`kind: patterns` detectors in rules/guardrails.yaml): credentials and
 * identifiers of the operator's own (an internal token format, a customer number) that no built-in shape
 * knows. Each is named, has a mask and a test string, and is compiled with RE2 semantics by `re2js`, the
 * JavaScript port of RE2: matching is linear in the text whatever the pattern, so an operator cannot put a
 * catastrophically backtracking expression on the request path, and what RE2 cannot guarantee (backreferences,
 * lookaround) is refused when the file is loaded, as is a pattern that does not match its own test string or
 * that matches the empty string. A refused file is refused whole: the configuration serving keeps serving.
 *
 * Patterns match the normalised text (look-alike characters folded, invisible ones removed), like the secret
 * shapes; hits are mapped back to the original text by the caller.
 */
import { RE2JS } from 're2js';
import type { PatternDoc } from './types.js';

export interface OperatorPattern {
  name: string;
  re: RE2JS;
  mask: string;
}

export interface PatternHit {
  /** Index of the pattern in its detector. */
  pattern: number;
  start: number;
  end: number;
}

/** Compiles one pattern or throws an Error naming `path` (its JSON path in the rules file) and why. */
export function compilePattern(doc: PatternDoc, path: string): OperatorPattern {
  let re: RE2JS;
  try {
    re = RE2JS.compile(doc.pattern, doc.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    throw new Error(`${path}/pattern: pattern "${doc.name}" is refused: RE2 cannot compile it, so its matching time is not guaranteed linear (${why})`, {
      cause: err,
    });
  }
  if (re.matcher('').find()) throw new Error(`${path}/pattern: pattern "${doc.name}" matches the empty string`);
  if (!re.matcher(doc.test).find()) throw new Error(`${path}/test: pattern "${doc.name}" does not match its test string`);
  return { name: doc.name, re, mask: doc.mask };
}

/** Every match of every pattern in `text`, left to right per pattern (RE2: linear in the text). */
export function findPatternHits(text: string, patterns: readonly OperatorPattern[]): PatternHit[] {
  const hits: PatternHit[] = [];
  patterns.forEach((p, pattern) => {
    const m = p.re.matcher(text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end > start) hits.push({ pattern, start, end });
    }
  });
  return hits;
}
