/**
 * The admission policy, in-process: the Rego of policies/admission compiled to wasm
 * (policies/build/admission.wasm) and evaluated with @open-policy-agent/opa-wasm. The gateway loads one
 * engine per compiled runtime, gives it the catalog and rules once with `setData`, and then asks it for
 * one `decide(input)` per call, synchronously, on the same wasm instance.
 *
 * The types here are the contract with policies/admission/admission.rego; its table of cases
 * (policies/admission/testdata/cases.yaml) holds this engine and `opa test` to the same answers.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { DEFAULT_WASM_PATH, ENTRYPOINT } from './manifest.js';
import { inCanonicalOrder } from '../canonical-json.js';

export { ENTRYPOINT, readPolicyManifest } from './manifest.js';

export type Team = 'blue' | 'red';
export type Route = 'shared' | 'dedicated';
export type GuardrailAction = 'block' | 'redact' | 'flag';

/** What the policy needs to know of one catalog entry. */
export interface PolicyModel {
  team: Team;
  /** `shared` | `dedicated`; informational, the policy decides by team. Kept loose for the catalog's type. */
  route: Route | (string & {});
  tasks: string[];
  /** Derived from config: the route has an origin. False is refused by name (route-not-configured). */
  available: boolean;
}

export interface PolicyRung {
  level: string;
  /** Position on the ladder, 1 = lowest; the lowest rung opening a band is the one a denial names. */
  rank: number;
  /** The highest band this rung opens. */
  band: string;
}

export interface PolicyTeam {
  requiresVerification: boolean;
  requiresAup: boolean;
  requiresScope: boolean;
  /** The highest band the team ever serves, whatever the rung. */
  maxBand: string;
}

export interface PolicyRules {
  /** Bands, lowest first. */
  bands: string[];
  taskBands: Record<string, string>;
  rungs: Record<string, PolicyRung>;
  teams: Record<string, PolicyTeam>;
  guardrails: Record<string, { action: GuardrailAction }>;
}

/** The `data` document: operator YAML turned into plain data, set once per runtime. */
export interface PolicyData {
  catalog: { models: Record<string, PolicyModel> };
  rules: PolicyRules;
}

export interface PolicyScope {
  id: string;
  tasks: string[];
}

export interface PolicyPrincipal {
  id: string;
  /** The current rung's id; null when there is none or it expired (then `rungExpired` is true). */
  rung: string | null;
  rungExpired: boolean;
  /** Consent to the AUP version in force. */
  aup: boolean;
  /** Approved scopes only, in approval order (the chat path takes the first that lists the task). */
  scopes: PolicyScope[];
}

/** The `input` document: small and flat, built once per call. */
export interface PolicyInput {
  principal: PolicyPrincipal | null;
  model: string;
  task: string;
  /** The scope a job names; null on the chat path. */
  scopeId: string | null;
  /** Guardrail rule ids the detectors matched. */
  findings: string[];
}

/**
 * A deny rule's `custom.code`. The shipped policy's codes are in the error table (src/errors.ts); a policy
 * author may add others in Rego alone, so the type is open.
 */
export type DenialCode = string;

export interface Denial {
  code: DenialCode;
  /** Safe to show the caller: names model, task, band, rung or scope; never prompt text or a rule id. */
  message: string;
  /** Admission step: 1 principal, 2 model/route, 3 team requirements, 5 guardrails (4, quota, is the store's). */
  step: number;
  /** The HTTP status the rule's METADATA names (`custom.status`, 403 when it names none). */
  status: number;
}

export interface Decision {
  /** Exactly `denials.length === 0`. */
  allow: boolean;
  /** Every failed check in answer order: denials[0] is the answer, the rest are for logs. */
  denials: Denial[];
  team: Team | null;
  band: string | null;
  /** The scope the call runs under, or null (blue-team calls need none). */
  scope: string | null;
  /** Rule ids per action, sorted; ids the rules do not know are ignored. */
  guardrails: Record<GuardrailAction, string[]>;
}

export interface PolicyEngine {
  /** First 12 hex digits of the wasm's sha256: names exactly the policy being served. */
  readonly version: string;
  /** The whole sha256 (hex) of the wasm, for the version history GET /v1/secure serves. */
  readonly sha256: string;
  /**
   * Replaces the whole `data` document. Meant to be called once, before the engine serves: a reload
   * builds a new engine and swaps it in whole, so a bad edit never leaves a half-set engine serving.
   */
  setData(data: PolicyData): void;
  /** Evaluates the decision. Throws (never allows) when the policy fails to produce one. */
  decide(input: PolicyInput): Decision;
}

export async function loadPolicyEngine(wasmPath: string = DEFAULT_WASM_PATH): Promise<PolicyEngine> {
  let wasm: Buffer;
  try {
    wasm = await readFile(wasmPath);
  } catch (err) {
    throw new Error(`cannot read the admission policy ${wasmPath} (run \`npm run policies:build\`): ${String(err)}`, { cause: err });
  }
  const policy = await loadPolicy(wasm);
  // opa-wasm throws a bare string, not an Error, for an unknown entrypoint; check up front instead.
  if (!Object.hasOwn(policy.entrypoints as object, ENTRYPOINT)) {
    throw new Error(`${wasmPath} has no ${ENTRYPOINT} entrypoint (run \`npm run policies:build\`)`);
  }
  const sha256 = createHash('sha256').update(wasm).digest('hex');
  const version = sha256.slice(0, 12);
  let dataSet = false;
  const memo = new DecisionMemo();

  return {
    version,
    sha256,
    setData(data: PolicyData): void {
      policy.setData(data);
      dataSet = true;
      memo.clear();
    },
    decide(input: PolicyInput): Decision {
      // Without data every model is unknown; refuse loudly rather than answer from an empty catalog.
      if (!dataSet) throw new Error('admission policy: setData() must be called before decide()');
      const key = JSON.stringify(input);
      const known = memo.get(key);
      if (known) return known;
      let resultSet: unknown;
      try {
        resultSet = policy.evaluate(input, ENTRYPOINT);
      } catch (err) {
        // opa-wasm aborts (e.g. a rule conflict caused by bad data) arrive as strings; make them Errors.
        throw err instanceof Error ? err : new Error(`admission policy aborted: ${String(err)}`);
      }
      const decision = (resultSet as Array<{ result?: unknown }> | null)?.[0]?.result;
      if (!isDecision(decision)) throw new Error('admission policy returned no decision');
      // Kept in key order: every call's decision record carries it, and its canonical text (src/canonical-json.ts)
      // has nothing to reorder then.
      return memo.set(key, deepFreeze(inCanonicalOrder(decision)));
    },
  };
}

/**
 * Decisions already taken, by their input's JSON. The policy is a pure function of its input and its data
 * (no time, randomness or I/O builtins; a rung's expiry is read in JavaScript before the input is built), so
 * the same input under the same data has the same answer, and a steady caller asks the same question on every
 * call: evaluating it in the wasm (input written in as JSON, parsed there, the result written out and parsed
 * back) was about a twentieth of a small call's CPU. Emptied by setData; capped by size (the bytes of its
 * keys and of the decisions' JSON), not count, and emptied when full: the next calls refill it with what
 * is asked now. Decisions are frozen: every caller shares them.
 */
class DecisionMemo {
  static readonly MAX_BYTES = 4 * 1024 * 1024;
  readonly #map = new Map<string, Decision>();
  #bytes = 0;

  get(key: string): Decision | undefined {
    return this.#map.get(key);
  }

  set(key: string, decision: Decision): Decision {
    const cost = 2 * (key.length + JSON.stringify(decision).length);
    if (cost > DecisionMemo.MAX_BYTES / 64) return decision;
    if (this.#bytes + cost > DecisionMemo.MAX_BYTES) this.clear();
    this.#map.set(key, decision);
    this.#bytes += cost;
    return decision;
  }

  clear(): void {
    this.#map.clear();
    this.#bytes = 0;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

function isDecision(value: unknown): value is Decision {
  const d = value as Partial<Decision> | null | undefined;
  return (
    typeof d?.allow === 'boolean' &&
    Array.isArray(d.denials) &&
    // The gateway trusts `allow`; a decision that contradicts its own denials is no decision.
    d.allow === (d.denials.length === 0) &&
    typeof d.guardrails === 'object'
  );
}
