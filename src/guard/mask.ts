/**
 * Masking: replace spans of an original text with a marker such as `[REDACTED:openai-key]`. Spans come from
 * several detectors and from the boundary scan, so they may overlap or touch; they are merged first and each
 * merged span becomes one marker (named after the kind of its first span). The marker is plain ASCII with no
 * quote or backslash, so masking inside JSON string content keeps it valid JSON.
 */
export interface Span {
  start: number;
  end: number;
  kind: string;
}

/** Sorted, non-overlapping spans; touching or overlapping spans are joined. */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) {
      if (s.end > last.end) last.end = s.end;
      // The entropy fallback names no provider: a specific kind found on the same text names the marker.
      if (last.kind === 'generic-secret' && s.kind !== 'generic-secret') last.kind = s.kind;
    } else {
      out.push({ ...s });
    }
  }
  return out;
}

export function maskTemplate(template: string, kind: string): string {
  return template.split('{kind}').join(kind);
}

/** The text with every span replaced by its marker, and how many markers were written. */
export function applyMasks(text: string, spans: readonly Span[], template: string): { text: string; masked: number } {
  const merged = mergeSpans(spans);
  if (merged.length === 0) return { text, masked: 0 };
  let out = '';
  let at = 0;
  for (const s of merged) {
    out += text.slice(at, s.start) + maskTemplate(template, s.kind);
    at = s.end;
  }
  return { text: out + text.slice(at), masked: merged.length };
}
