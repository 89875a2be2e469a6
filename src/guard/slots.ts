/**
 * Slots: a chat request seen as the ordered list of texts the model will read - each message's content,
 * each tool call's arguments, each tool definition - and the way back from masked texts to a new request.
 *
 * Order matters: the boundary scan joins neighbouring slots, so a secret split between a message and the
 * next message, or a tool call and its tool result, is read as one. JSON (tool-call arguments, tool
 * definitions) is split into its string leaves (keys and values), so detectors see decoded strings (a PEM
 * key inside JSON has real line breaks) and masking cannot break the JSON: the value is rebuilt and
 * re-serialised, and only when something in it was masked. Arguments that are not JSON are one text slot.
 *
 * Not slots: function names, `name`, `tool_call_id` and `role` - identifiers the wire constrains, whose
 * masking would break the conversation's references.
 */
import type { ChatLike } from './types.js';

export interface Slot {
  /** Location named in findings. */
  where: string;
  text: string;
  /** A message's content (conversation text), as opposed to tool-call arguments and tool definitions. */
  content: boolean;
}

type Part =
  | { kind: 'content'; mi: number; slot: number }
  | { kind: 'args-text'; mi: number; ti: number; slot: number }
  | { kind: 'args-json'; mi: number; ti: number; value: unknown; first: number; count: number }
  | { kind: 'tool'; index: number; value: unknown; first: number; count: number };

export interface Slots {
  readonly slots: readonly Slot[];
  /** A new request with slot texts replaced; parts without replacements are copied unchanged. */
  rebuild<T extends ChatLike>(req: T, replacements: ReadonlyMap<number, string>): T;
}

function collectLeaves(v: unknown, where: string, out: Slot[]): void {
  if (typeof v === 'string') out.push({ where, text: v, content: false });
  else if (Array.isArray(v)) for (const x of v) collectLeaves(x, where, out);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push({ where, text: k, content: false });
      collectLeaves(x, where, out);
    }
  }
}

function rebuildLeaves(v: unknown, next: () => string): unknown {
  if (typeof v === 'string') return next();
  if (Array.isArray(v)) return v.map((x) => rebuildLeaves(x, next));
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      let key = next();
      // Two keys masked to the same marker must not overwrite each other.
      for (let n = 2; Object.hasOwn(o, key); n++) key = `${key.replace(/ #\d+$/, '')} #${n}`;
      o[key] = rebuildLeaves(x, next);
    }
    return o;
  }
  return v;
}

function parseJsonContainer(s: string): unknown {
  const t = s.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

export function collectSlots(req: ChatLike): Slots {
  const slots: Slot[] = [];
  const parts: Part[] = [];
  req.messages.forEach((m, mi) => {
    if (typeof m.content === 'string') {
      parts.push({ kind: 'content', mi, slot: slots.length });
      slots.push({ where: `messages[${mi}].content`, text: m.content, content: true });
    }
    (m.tool_calls ?? []).forEach((tc, ti) => {
      const args = tc.function?.arguments;
      if (typeof args !== 'string') return;
      const where = `messages[${mi}].tool_calls[${ti}].function.arguments`;
      const value = parseJsonContainer(args);
      if (value === undefined) {
        parts.push({ kind: 'args-text', mi, ti, slot: slots.length });
        slots.push({ where, text: args, content: false });
      } else {
        const first = slots.length;
        collectLeaves(value, where, slots);
        parts.push({ kind: 'args-json', mi, ti, value, first, count: slots.length - first });
      }
    });
  });
  (req.tools ?? []).forEach((tool, index) => {
    const first = slots.length;
    collectLeaves(tool, `tools[${index}]`, slots);
    parts.push({ kind: 'tool', index, value: tool, first, count: slots.length - first });
  });

  function rebuild<T extends ChatLike>(req: T, replacements: ReadonlyMap<number, string>): T {
    // Fresh containers throughout, so the caller may change the copy without touching the original.
    const messages = req.messages.map((m) => ({
      ...m,
      ...(m.tool_calls ? { tool_calls: m.tool_calls.map((tc) => ({ ...tc, function: { ...tc.function } })) } : {}),
    }));
    const tools = req.tools ? [...req.tools] : undefined;
    const touched = (first: number, count: number) => {
      for (let i = first; i < first + count; i++) if (replacements.has(i)) return true;
      return false;
    };
    const leafFeed = (first: number) => {
      let i = first;
      return () => {
        const r = replacements.get(i) ?? slots[i]!.text;
        i++;
        return r;
      };
    };
    for (const p of parts) {
      switch (p.kind) {
        case 'content': {
          const r = replacements.get(p.slot);
          if (r !== undefined) messages[p.mi]!.content = r;
          break;
        }
        case 'args-text': {
          const r = replacements.get(p.slot);
          if (r !== undefined) messages[p.mi]!.tool_calls![p.ti]!.function.arguments = r;
          break;
        }
        case 'args-json':
          if (touched(p.first, p.count)) {
            messages[p.mi]!.tool_calls![p.ti]!.function.arguments = JSON.stringify(rebuildLeaves(p.value, leafFeed(p.first)));
          }
          break;
        case 'tool':
          if (touched(p.first, p.count)) tools![p.index] = rebuildLeaves(p.value, leafFeed(p.first));
          else tools![p.index] = structuredClone(p.value);
          break;
      }
    }
    return { ...req, messages, ...(tools ? { tools } : {}) } as T;
  }

  return { slots, rebuild };
}
