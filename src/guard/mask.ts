/**
 * Masking: replace spans of an original text with a marker such as `[REDACTED:openai-key]`. Spans come from
 * several detectors, several redact rules and the boundary scan, so they may overlap or touch; they are merged
 * first and each merged span becomes one marker per rule that found something in it (in the rules' order),
 * so where a second rule also matched, its mask shows beside the first's - as the receipt names both. Within
 * one rule the marker is named after the kind of its first span (a provider's kind rather than the entropy
 * fallback's). The marker is plain ASCII with no quote or backslash, so masking inside JSON string content
 * keeps it valid JSON.
 */
export interface Span {
  start: number;
  end: number;
  kind: string;
  /** The rule's position in the rules file (its marker's place among the others). */
  rule: number;
  /** The rule's mask template (`{kind}` becomes the kind). */
  template: string;
}

export interface MergedSpan {
  start: number;
  end: number;
  /** One span per rule, in rule order: whose marker is written. */
  marks: Span[];
}

/** Sorted, non-overlapping spans; touching or overlapping spans are joined. */
export function mergeSpans(spans: readonly Span[]): MergedSpan[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start || b.end - a.end || a.rule - b.rule);
  const out: MergedSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) {
      if (s.end > last.end) last.end = s.end;
      const same = last.marks.find((m) => m.rule === s.rule);
      if (!same) last.marks.push(s);
      // The entropy fallback names no provider: a specific kind found on the same text names the marker.
      else if (same.kind === 'generic-secret' && s.kind !== 'generic-secret') last.marks[last.marks.indexOf(same)] = s;
    } else {
      out.push({ start: s.start, end: s.end, marks: [s] });
    }
  }
  for (const m of out) m.marks.sort((a, b) => a.rule - b.rule);
  return out;
}

export function maskTemplate(template: string, kind: string): string {
  return template.split('{kind}').join(kind);
}

/** The marker of a merged span: each rule's own, a marker written once even when two rules render it alike. */
export function markerOf(span: MergedSpan): string {
  return [...new Set(span.marks.map((m) => maskTemplate(m.template, m.kind)))].join('');
}

/** The text with every span replaced by its marker, and how many markers were written. */
export function applyMasks(text: string, spans: readonly Span[]): { text: string; masked: number } {
  const merged = mergeSpans(spans);
  if (merged.length === 0) return { text, masked: 0 };
  let out = '';
  let at = 0;
  for (const s of merged) {
    out += text.slice(at, s.start) + markerOf(s);
    at = s.end;
  }
  return { text: out + text.slice(at), masked: merged.length };
}
