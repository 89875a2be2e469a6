/**
 * Evaluating a recorded input again, outside the gateway's serving engine: the admission policy of a given
 * version (its wasm bytes, from the version history or a candidate folder) with a given `data` document,
 * through @open-policy-agent/opa-wasm as the gateway does; and the same question put to `opa eval` on the
 * Rego sources, as a second, independent engine (replay uses both when the opa binary is at hand).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import { ENTRYPOINT } from '../policy/manifest.js';
import { REPO_ROOT } from '../policy/source-hash.js';
import type { Decision, PolicyData, PolicyInput } from '../policy/engine.js';

export interface Evaluator {
  decide(input: PolicyInput): Decision;
}

/** An evaluator of the wasm `wasm` under `data`. Throws when the wasm has no admission entrypoint. */
export async function wasmEvaluator(wasm: Buffer, data: PolicyData): Promise<Evaluator> {
  const policy = await loadPolicy(wasm);
  if (!Object.hasOwn(policy.entrypoints as object, ENTRYPOINT)) throw new Error(`the policy has no ${ENTRYPOINT} entrypoint`);
  policy.setData(data);
  return {
    decide(input) {
      let set: unknown;
      try {
        set = policy.evaluate(input, ENTRYPOINT);
      } catch (err) {
        throw err instanceof Error ? err : new Error(`admission policy aborted: ${String(err)}`);
      }
      const result = (set as Array<{ result?: unknown }> | null)?.[0]?.result;
      if (!result || typeof result !== 'object') throw new Error('admission policy returned no decision');
      return result as Decision;
    },
  };
}

/**
 * The pinned opa binary (scripts/tools.env, under PORTCULLIS_TOOLS or ~/.cache/portcullis/tools), or
 * PORTCULLIS_OPA; null when neither is there. A PORTCULLIS_OPA that names no file throws: the operator
 * asked for that engine, and silently replaying without it would drop a check they expect.
 */
export function findOpa(env: Record<string, string | undefined> = process.env): string | null {
  const named = env['PORTCULLIS_OPA'];
  if (named) {
    if (!existsSync(named) || !statSync(named).isFile())
      throw new Error(`PORTCULLIS_OPA is ${named}, which is not a file: point it at the opa binary, or unset it (or pass --no-opa)`);
    return named;
  }
  let version: string | undefined;
  try {
    version = /^OPA_VERSION=(\S+)$/m.exec(readFileSync(join(REPO_ROOT, 'scripts/tools.env'), 'utf8'))?.[1];
  } catch {
    return null;
  }
  const dir = env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `opa-${version}`, 'opa');
  return version && existsSync(path) ? path : null;
}

/** `opa eval data.admission.decision` over the Rego sources, with `data` and each input; one process per call of this. */
export async function opaEvaluate(opa: string, sources: Record<string, string>, data: PolicyData, inputs: PolicyInput[]): Promise<Decision[]> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-opa-'));
  try {
    for (const [path, text] of Object.entries(sources)) {
      // Paths come from a stored version: keep them inside the folder.
      const safe = path
        .split('/')
        .filter((p) => p && p !== '..' && p !== '.')
        .join('/');
      mkdirSync(dirname(join(dir, 'rego', safe)), { recursive: true });
      writeFileSync(join(dir, 'rego', safe), text);
    }
    writeFileSync(join(dir, 'data.json'), JSON.stringify(data));
    // One query per input: the inputs go in as data under a name the policy does not use, and a
    // comprehension asks the decision for each (one opa process for all of them).
    writeFileSync(join(dir, 'inputs.json'), JSON.stringify({ inputs }));
    const query = `[d | some i; x := input.inputs[i]; d := data.${ENTRYPOINT.replaceAll('/', '.')} with input as x]`;
    const { stdout } = await promisify(execFile)(
      opa,
      ['eval', '--format', 'json', '-d', join(dir, 'rego'), '-d', join(dir, 'data.json'), '-i', join(dir, 'inputs.json'), query],
      {
        maxBuffer: 256 * 1024 * 1024,
      },
    );
    const out = JSON.parse(stdout) as { result?: Array<{ expressions: Array<{ value: Decision[] }> }> };
    const value = out.result?.[0]?.expressions[0]?.value;
    if (!Array.isArray(value) || value.length !== inputs.length) throw new Error('opa eval returned no decision');
    return value;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
