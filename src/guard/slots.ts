/**
 * Slots: a chat request seen as the ordered list of texts the model will read - every string the gateway
 * forwards (src/compat/forwarded.ts): each message's name, content and refusal, each tool call's function
 * name and arguments, each tool definition, the tool choice's function name - and the way back from masked
 * texts to a new request. What is scanned is exactly what is forwarded; the one exception, tool-call ids, is
 * never forwarded (the gateway sends its own ids), so it is not read either.
 *
 * Order matters: the boundary scan joins neighbouring slots, so a secret split between a message and the
 * next message, or a tool call and its tool result, is read as one. JSON (tool-call arguments, tool
 * definitions) is split into its string leaves (keys and values), so detectors see decoded strings (a PEM
 * key inside JSON has real line breaks) and masking cannot break the JSON: the value is rebuilt and
 * re-serialised, and only when something in it was masked. Arguments that are not JSON are one text slot.
 *
 * Names (`messages[].name`, function names in tools, tool calls and the tool choice) are slots marked
 * `identifier`: block and flag rules read them like any text, but masking one would break the references
 * between a tool, its calls and the choice, so a redact finding there refuses the call instead (the scan
 * stage answers 400 `secret-in-identifier`). `role` and tool-call ids are not slots.
 */
import type { ChatLike } from './types.js';
import { isRawNumber, parseKeepingNumbers } from '../compat/json-numbers.js';

export interface Slot {
  /** Location named in findings. */
  where: string;
  text: string;
  /** A message's content (conversation text), as opposed to tool-call arguments and tool definitions. */
  content: boolean;
  /** A name the wire uses as a reference: scanned, never masked. */
  identifier?: boolean;
  /** A key of a JSON object (tool-call arguments, tool definitions): masked like a value when it holds a secret. */
  key?: boolean;
  /** Part of a tool definition. */
  definition?: boolean;
}

type Part =
  | { kind: 'content'; mi: number; slot: number }
  | { kind: 'name'; mi: number; slot: number }
  | { kind: 'refusal'; mi: number; slot: number }
  | { kind: 'call-name'; mi: number; ti: number; slot: number }
  | { kind: 'choice-name'; slot: number }
  | { kind: 'args-text'; mi: number; ti: number; slot: number }
  | { kind: 'args-json'; mi: number; ti: number; value: unknown; first: number; count: number }
  | { kind: 'tool'; index: number; value: unknown; name: number | null; first: number; count: number };

export interface Slots {
  readonly slots: readonly Slot[];
  /** A new request with slot texts replaced; parts without replacements are copied unchanged. */
  rebuild<T extends ChatLike>(req: T, replacements: ReadonlyMap<number, string>): T;
}

function collectLeaves(v: unknown, where: string, out: Slot[]): void {
  if (typeof v === 'string') out.push({ where, text: v, content: false });
  else if (isRawNumber(v)) return;
  else if (Array.isArray(v)) for (const x of v) collectLeaves(x, where, out);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push({ where, text: k, content: false, key: true });
      collectLeaves(x, where, out);
    }
  }
}

function rebuildLeaves(v: unknown, next: () => string): unknown {
  if (typeof v === 'string') return next();
  // A number kept as its source text (src/compat/json-numbers.ts) goes back as it came.
  if (isRawNumber(v)) return v;
  if (Array.isArray(v)) return v.map((x) => rebuildLeaves(x, next));
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const x of Object.values(v)) {
      let key = next();
      // Two keys masked to the same marker must not overwrite each other.
      for (let n = 2; Object.hasOwn(o, key); n++) key = `${key.replace(/ #\d+$/, '')} #${n}`;
      o[key] = rebuildLeaves(x, next);
    }
    return o;
  }
  return v;
}

/** Arguments that hold a JSON object, array or string (validate re-serialised them: these bytes are forwarded). */
function parseJsonContainer(s: string): unknown {
  const t = s.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[') && !t.startsWith('"')) return undefined;
  try {
    // Numbers as written, so arguments rebuilt around a mask keep them (src/compat/json-numbers.ts).
    return parseKeepingNumbers(s);
  } catch {
    return undefined;
  }
}

export function collectSlots(req: ChatLike): Slots {
  const slots: Slot[] = [];
  const parts: Part[] = [];
  req.messages.forEach((m, mi) => {
    if (typeof m.name === 'string') {
      parts.push({ kind: 'name', mi, slot: slots.length });
      slots.push({ where: `messages[${mi}].name`, text: m.name, content: false, identifier: true });
    }
    if (typeof m.content === 'string') {
      parts.push({ kind: 'content', mi, slot: slots.length });
      slots.push({ where: `messages[${mi}].content`, text: m.content, content: true });
    }
    if (typeof m.refusal === 'string') {
      parts.push({ kind: 'refusal', mi, slot: slots.length });
      slots.push({ where: `messages[${mi}].refusal`, text: m.refusal, content: false });
    }
    (m.tool_calls ?? []).forEach((tc, ti) => {
      if (typeof tc.function?.name === 'string') {
        parts.push({ kind: 'call-name', mi, ti, slot: slots.length });
        slots.push({ where: `messages[${mi}].tool_calls[${ti}].function.name`, text: tc.function.name, content: false, identifier: true });
      }
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
    // The function's name is an identifier slot of its own; the rest of the definition is read leaf by leaf.
    const fn = (tool as { function?: { name?: unknown } } | null)?.function;
    let name: number | null = null;
    let value: unknown = tool;
    if (fn && typeof fn === 'object' && typeof fn.name === 'string') {
      name = slots.length;
      slots.push({ where: `tools[${index}].function.name`, text: fn.name, content: false, identifier: true });
      const { name: _, ...restFn } = fn;
      value = { ...(tool as object), function: restFn };
    }
    const first = slots.length;
    collectLeaves(value, `tools[${index}]`, slots);
    for (let i = first; i < slots.length; i++) slots[i]!.definition = true;
    parts.push({ kind: 'tool', index, value, name, first, count: slots.length - first });
  });
  const choice = (req.tool_choice as { function?: { name?: unknown } } | undefined)?.function;
  if (choice && typeof choice.name === 'string') {
    parts.push({ kind: 'choice-name', slot: slots.length });
    slots.push({ where: 'tool_choice.function.name', text: choice.name, content: false, identifier: true });
  }

  function rebuild<T extends ChatLike>(req: T, replacements: ReadonlyMap<number, string>): T {
    // Fresh containers throughout, so the caller may change the copy without touching the original.
    const messages = req.messages.map((m) => ({
      ...m,
      ...(m.tool_calls ? { tool_calls: m.tool_calls.map((tc) => ({ ...tc, function: { ...tc.function } })) } : {}),
    }));
    const tools = req.tools ? [...req.tools] : undefined;
    let toolChoice = req.tool_choice;
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
        case 'name': {
          const r = replacements.get(p.slot);
          if (r !== undefined) messages[p.mi]!.name = r;
          break;
        }
        case 'refusal': {
          const r = replacements.get(p.slot);
          if (r !== undefined) messages[p.mi]!.refusal = r;
          break;
        }
        case 'call-name': {
          const r = replacements.get(p.slot);
          if (r !== undefined) messages[p.mi]!.tool_calls![p.ti]!.function.name = r;
          break;
        }
        case 'choice-name': {
          const r = replacements.get(p.slot);
          if (r !== undefined) toolChoice = { ...(toolChoice as object), function: { name: r } };
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
        case 'tool': {
          const t = (touched(p.first, p.count) ? rebuildLeaves(p.value, leafFeed(p.first)) : structuredClone(p.value)) as { function?: object };
          if (p.name !== null && t.function) t.function = { name: replacements.get(p.name) ?? slots[p.name]!.text, ...t.function };
          tools![p.index] = t;
          break;
        }
      }
    }
    return { ...req, messages, ...(tools ? { tools } : {}), ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}) };
  }

  return { slots, rebuild };
}
