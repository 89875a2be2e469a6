/**
 * The external classifiers of a rules file, built when the runtime is compiled: the `classifiers:` list of
 * `rules/guardrails.yaml` becomes live Classifier instances (with their connection pools) handed to
 * compileGuardrails, and closed with the runtime.
 *
 * Kinds:
 *   moderation   an OpenAI-compatible /v1/moderations endpoint (moderation.ts)
 *
 * The seam for another kind — a guard model (Llama Guard and the like) reached through a configured route —
 * is the Classifier interface (types.ts): a class whose `classify(texts)` asks the model and maps its
 * categories to rule ids the same way, with the same required `failClosed`. Add its doc type to
 * ClassifierDoc, its schema branch to rules/guardrails.schema.json, and a case here.
 */
import type { Action, ClassifierDoc, GuardrailsDoc } from './types.js';
import { moderationClassifier, type CategoryTarget, type ExternalClassifier } from './moderation.js';

export type { ExternalClassifier } from './moderation.js';

export interface ExternalClassifiers {
  classifiers: ExternalClassifier[];
  close(): Promise<void>;
}

function targets(doc: GuardrailsDoc, c: ClassifierDoc): Map<string, CategoryTarget> {
  const actions = new Map<string, Action>(doc.rules.map((r) => [r.id, r.action]));
  const out = new Map<string, CategoryTarget>();
  for (const [category, t] of Object.entries(c.categories)) {
    const rule = typeof t === 'string' ? t : t.rule;
    const action = actions.get(rule);
    // compileGuardrails says which rule is unknown, with the file; here it is enough not to build it.
    if (!action) throw new Error(`classifier ${c.id}: category "${category}" names unknown rule "${rule}"`);
    out.set(category, { rule, action, ...(typeof t === 'string' ? {} : { minScore: t.minScore }) });
  }
  return out;
}

/**
 * Builds every classifier the document lists. Throws (closing what it built) when one cannot be built: a
 * key variable that is not set, a URL that is not one. Problems name the JSON path in the rules file.
 */
export function buildClassifiers(doc: GuardrailsDoc, env: Record<string, string | undefined>): ExternalClassifiers {
  const built: ExternalClassifier[] = [];
  const close = () => Promise.all(built.map((c) => c.close())).then(() => undefined);
  try {
    (doc.classifiers ?? []).forEach((c, i) => {
      switch (c.kind) {
        case 'moderation': {
          let authorization: string | null = null;
          if (c.apiKeyEnv) {
            const key = env[c.apiKeyEnv];
            if (!key) throw new Error(`/classifiers/${i}/apiKeyEnv names ${c.apiKeyEnv}, which is not set in the environment`);
            authorization = `Bearer ${key}`;
          }
          try {
            new URL(c.url);
          } catch {
            throw new Error(`/classifiers/${i}/url is not a URL`);
          }
          built.push(
            moderationClassifier({
              id: c.id,
              url: c.url,
              authorization,
              ...(c.model ? { model: c.model } : {}),
              timeoutMs: c.timeoutMs,
              failClosed: c.failClosed,
              categories: targets(doc, c),
            }),
          );
          break;
        }
        default:
          throw new Error(`/classifiers/${i}/kind "${(c as { kind: string }).kind}" is not a classifier kind`);
      }
    });
  } catch (err) {
    void close();
    throw err;
  }
  return { classifiers: built, close };
}
