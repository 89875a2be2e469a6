/**
 * An external classifier: an OpenAI-compatible moderation endpoint (`POST /v1/moderations`; OpenAI's own,
 * or any server speaking its wire). One request per chat request, every text of it in one `input` array
 * (one entry per place: a message's content, a tool call's arguments, a tool definition), answered with
 * one result per entry. A category the rules file maps to a rule becomes a finding of that rule at that
 * place when the endpoint marks it (`categories[c] === true`), or, with `minScore`, when its score reaches
 * it. The policy then decides what the rule means, as for every other finding.
 *
 * Anything short of a well-formed answer in time — refused connection, timeout, non-2xx, a body of the
 * wrong shape — rejects with a ClassifierError whose reason is fixed text; the caller (Guardrails.classify)
 * applies the classifier's stated failure mode. The key is read from the environment by the caller and held
 * only in the Authorization header here; it is never logged. The pool is compiled with the runtime and
 * closed with it (keep-alive, no `fetch()` per call).
 */
import { Pool } from 'undici';
import { ClassifierError, type Action, type Classifier, type ClassifierText, type Finding } from './types.js';

export interface CategoryTarget {
  rule: string;
  action: Action;
  /** Match on `category_scores[c] >= minScore` instead of the endpoint's own `categories[c]` verdict. */
  minScore?: number;
}

export interface ModerationOptions {
  id: string;
  url: string;
  /** `Bearer <key>`, or null to send no Authorization header. */
  authorization: string | null;
  model?: string;
  timeoutMs: number;
  failClosed: boolean;
  categories: ReadonlyMap<string, CategoryTarget>;
  connections?: number;
}

export interface ExternalClassifier extends Classifier {
  readonly failClosed: boolean;
  close(): Promise<void>;
}

interface ModerationResult {
  categories?: Record<string, unknown>;
  category_scores?: Record<string, unknown>;
}

/** The request's texts, one input per place (JSON leaves of one tool definition are joined). */
function inputsOf(texts: readonly ClassifierText[]): Array<{ where: string; text: string }> {
  const byWhere = new Map<string, string[]>();
  for (const t of texts) {
    if (t.text.trim() === '') continue;
    const list = byWhere.get(t.where);
    if (list) list.push(t.text);
    else byWhere.set(t.where, [t.text]);
  }
  return [...byWhere].map(([where, parts]) => ({ where, text: parts.join('\n') }));
}

function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string } | null;
  const name = e?.name ?? '';
  const code = e?.code ?? '';
  if (name === 'TimeoutError' || name === 'AbortError' || /Timeout/.test(name) || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timeout (${timeoutMs} ms)`;
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'unreachable';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection lost';
  return 'error';
}

export function moderationClassifier(opts: ModerationOptions): ExternalClassifier {
  const url = new URL(opts.url);
  const path = `${url.pathname}${url.search}`;
  const pool = new Pool(url.origin, {
    connections: opts.connections ?? 16,
    pipelining: 1,
    connect: { timeout: opts.timeoutMs },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.authorization) headers['authorization'] = opts.authorization;

  async function ask(input: string[]): Promise<ModerationResult[]> {
    const body = JSON.stringify({ input, ...(opts.model ? { model: opts.model } : {}) });
    let res;
    try {
      res = await pool.request({ method: 'POST', path, headers, body, signal: AbortSignal.timeout(opts.timeoutMs) });
    } catch (err) {
      throw new ClassifierError(reasonOf(err, opts.timeoutMs), { cause: err });
    }
    let parsed: unknown;
    try {
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new ClassifierError(`http ${res.statusCode}`);
      }
      parsed = await res.body.json();
    } catch (err) {
      if (err instanceof ClassifierError) throw err;
      const reason = reasonOf(err, opts.timeoutMs);
      throw new ClassifierError(reason === 'error' ? 'malformed answer' : reason, { cause: err });
    }
    const results = (parsed as { results?: unknown } | null)?.results;
    if (!Array.isArray(results) || results.length !== input.length || !results.every((r) => r !== null && typeof r === 'object')) {
      throw new ClassifierError('malformed answer');
    }
    return results as ModerationResult[];
  }

  return {
    id: opts.id,
    failClosed: opts.failClosed,
    async classify(texts) {
      const inputs = inputsOf(texts);
      if (inputs.length === 0) return [];
      const results = await ask(inputs.map((i) => i.text));
      const findings: Finding[] = [];
      results.forEach((r, i) => {
        for (const [category, target] of opts.categories) {
          const hit =
            target.minScore === undefined
              ? r.categories?.[category] === true
              : typeof r.category_scores?.[category] === 'number' && r.category_scores[category] >= target.minScore;
          if (hit) findings.push({ rule: target.rule, action: target.action, detector: `${opts.id}:${category}`, where: inputs[i]!.where });
        }
      });
      return findings;
    },
    close: () => pool.close(),
  };
}
