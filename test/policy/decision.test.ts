/**
 * The decision table (policies/admission/testdata/cases.yaml) run through the compiled wasm, the engine
 * the gateway serves with. policies/admission/admission_test.rego runs the same table through `opa test`,
 * so the Rego engine and the wasm are held to the same answers.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { loadPolicyEngine, type Decision, type PolicyData, type PolicyEngine, type PolicyInput } from '../../src/policy/engine.js';
import { REPO_ROOT } from '../../src/policy/source-hash.js';

interface Case {
  name: string;
  input: PolicyInput;
  allow: boolean;
  code: string | null;
  codes?: string[];
  team?: string | null;
  band?: string | null;
  scope?: string | null;
  guardrails?: Decision['guardrails'];
  messageIncludes?: string[];
  messageExcludes?: string[];
}

const table = parse(readFileSync(join(REPO_ROOT, 'policies/admission/testdata/cases.yaml'), 'utf8')) as {
  fixture: PolicyData;
  cases: Case[];
};

/** What a decision says, in the table's vocabulary, limited to the fields the case pins down. */
function observed(c: Case, d: Decision): Record<string, unknown> {
  const all: Record<string, unknown> = {
    allow: d.allow,
    code: d.denials[0]?.code ?? null,
    codes: d.denials.map((x) => x.code),
    team: d.team,
    band: d.band,
    scope: d.scope,
    guardrails: d.guardrails,
  };
  return Object.fromEntries(
    Object.keys(all)
      .filter((k) => k in c)
      .map((k) => [k, all[k]]),
  );
}

function expected(c: Case): Record<string, unknown> {
  const keys = ['allow', 'code', 'codes', 'team', 'band', 'scope', 'guardrails'] as const;
  return Object.fromEntries(keys.filter((k) => k in c).map((k) => [k, c[k]]));
}

/** The pinned opa (scripts/tools.env, built by scripts/setup.sh), or null when it is not installed. */
function pinnedOpa(): string | null {
  const version = /^OPA_VERSION=(\S+)$/m.exec(readFileSync(join(REPO_ROOT, 'scripts/tools.env'), 'utf8'))?.[1];
  const dir = process.env.PORTCULLIS_TOOLS || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `opa-${version}`, 'opa');
  return version && existsSync(path) ? path : null;
}

describe('policy: admission decision (compiled wasm)', () => {
  let engine: PolicyEngine;

  before(async () => {
    engine = await loadPolicyEngine();
    engine.setData(table.fixture);
  });

  describe('decision table', () => {
    for (const c of table.cases) {
      it(c.name, () => {
        const decision = engine.decide(c.input);
        expect(observed(c, decision)).to.deep.equal(expected(c));
        expect(decision.allow).to.equal(decision.denials.length === 0);
        const steps = decision.denials.map((d) => d.step);
        expect(steps).to.deep.equal([...steps].sort((a, b) => a - b));
        const message = decision.denials[0]?.message ?? '';
        for (const text of c.messageIncludes ?? []) expect(message).to.include(text);
        for (const text of c.messageExcludes ?? []) expect(message).not.to.include(text);
      });
    }
  });

  // The table pins codes and fragments of messages; this pins everything, messages included, case by case
  // against the Rego engine itself (opa-wasm implements sprintf in JavaScript, opa in Go).
  it('answers exactly as `opa eval` on every case of the table', function () {
    const opa = pinnedOpa();
    if (!opa) throw new Error('the pinned opa is missing; run: npm run setup');
    const query = [
      'some i',
      'case := data.admission.testdata.cases[i]',
      'result := data.admission.decision with input as case.input' +
        ' with data.catalog as data.admission.testdata.fixture.catalog' +
        ' with data.rules as data.admission.testdata.fixture.rules',
    ].join('\n');
    const out = execFileSync(opa, ['eval', '--ignore', 'build', '-d', 'policies', '-f', 'json', query], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const rows = (JSON.parse(out) as { result: Array<{ bindings: { i: number; result: Decision } }> }).result;
    expect(rows).to.have.length(table.cases.length);
    for (const { bindings } of rows) {
      const c = table.cases[bindings.i]!;
      expect(engine.decide(c.input), c.name).to.deep.equal(bindings.result);
    }
  });

  it('covers every denial code of the contract', () => {
    const codes = new Set(table.cases.flatMap((c) => (c.codes ?? []).concat(c.code ?? [])));
    for (const code of [
      'unauthenticated',
      'model-not-found',
      'route-not-configured',
      'verification-required',
      'aup-consent-required',
      'research-scope-required',
      'task-not-offered',
      'business-rung-required',
      'contracted-rung-required',
      'scope-not-approved',
      'task-out-of-scope',
      'guardrail-blocked',
    ]) {
      expect(codes, code).to.include(code);
    }
  });

  it('never names a guardrail rule in a message', () => {
    const ruleIds = Object.keys(table.fixture.rules.guardrails);
    for (const c of table.cases) {
      for (const denial of engine.decide(c.input).denials) {
        for (const id of ruleIds) expect(denial.message, c.name).not.to.include(id);
      }
    }
  });

  it('gives the same answers when the instance is reused in any order', () => {
    const first = table.cases.map((c) => engine.decide(c.input));
    const again = [...table.cases]
      .reverse()
      .map((c) => engine.decide(c.input))
      .reverse();
    expect(again).to.deep.equal(first);
  });

  it('takes new data without a recompile', async () => {
    const other = await loadPolicyEngine();
    const data = structuredClone(table.fixture);
    data.catalog.models['red-whitehacker-b']!.available = true;
    other.setData(data);
    const contracted = table.cases.find((c) => c.name === 'listed model without a route is refused by name')!;
    expect(engine.decide(contracted.input).denials[0]?.code).to.equal('route-not-configured');
    expect(other.decide(contracted.input).allow).to.equal(true);
  });

  it('answers a question asked before from what it decided, until new data changes the answer', async () => {
    // The engine remembers decisions by input (src/policy/engine.ts): the same input on the same instance
    // must keep its answer, and setData on that instance must forget them all.
    const own = await loadPolicyEngine();
    own.setData(table.fixture);
    const contracted = table.cases.find((c) => c.name === 'listed model without a route is refused by name')!;
    const first = own.decide(contracted.input);
    expect(first.denials[0]?.code).to.equal('route-not-configured');
    expect(own.decide(structuredClone(contracted.input))).to.deep.equal(first);
    expect(
      Object.isFrozen(first) && Object.isFrozen(first.denials) && Object.isFrozen(first.guardrails),
      'a shared decision cannot be changed by one caller',
    ).to.equal(true);
    const data = structuredClone(table.fixture);
    data.catalog.models['red-whitehacker-b']!.available = true;
    own.setData(data);
    expect(own.decide(contracted.input).allow).to.equal(true);
    own.setData(table.fixture);
    expect(own.decide(contracted.input).denials[0]?.code).to.equal('route-not-configured');
  });

  it('refuses to decide before data is set', async () => {
    const fresh = await loadPolicyEngine();
    expect(() => fresh.decide(table.cases[0]!.input)).to.throw(/setData/);
  });

  it('names its version by the wasm it serves', () => {
    expect(engine.version).to.match(/^[0-9a-f]{12}$/);
  });

  it('fails to load a missing bundle with the command that builds it', async () => {
    let error: unknown;
    try {
      await loadPolicyEngine(join(REPO_ROOT, 'policies/build/missing.wasm'));
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.include('npm run policies:build');
  });
});
