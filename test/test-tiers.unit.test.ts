/**
 * The suite has two tiers: `test:core` (which CI runs on both supported Nodes: on the older one beside
 * `npm test` on the newer) and `test:heavy` (browsers, other languages, clusters, containers). Together
 * they must be `npm test`'s suite, every file once: what `test:core` leaves out is exactly what
 * `test:heavy` runs, so no file falls between tiers and none runs twice on one Node.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';

const scripts = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The quoted arguments of the mocha command in a script: [spec globs, --ignore globs]. */
function mochaArgs(name: string): { specs: string[]; ignores: string[] } {
  const script = scripts[name]!;
  const mocha = script.slice(script.indexOf('mocha '));
  const specs: string[] = [];
  const ignores: string[] = [];
  for (const m of mocha.matchAll(/(--ignore )?"([^"]+)"/g)) (m[1] ? ignores : specs).push(m[2]!);
  return { specs, ignores };
}

describe('test tiers: core and heavy make up the whole suite', () => {
  it('npm test runs every *.test.ts; test:core runs the same less exactly what test:heavy runs', () => {
    expect(mochaArgs('test')).to.deep.equal({ specs: ['test/**/*.test.ts'], ignores: [] });
    const core = mochaArgs('test:core');
    const heavy = mochaArgs('test:heavy');
    expect(core.specs).to.deep.equal(['test/**/*.test.ts']);
    expect(heavy.ignores).to.deep.equal([]);
    expect([...core.ignores].sort()).to.deep.equal([...heavy.specs].sort());
  });

  it("test:evals is part of the heavy tier, and CI's first lane leaves out exactly the evaluations its second runs", () => {
    const evals = mochaArgs('test:evals');
    expect(evals.ignores).to.deep.equal([]);
    expect(mochaArgs('test:heavy').specs).to.include.members(evals.specs);
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    const glob = /^evals='([^']+)'$/m.exec(ci)?.[1];
    expect(glob, ".ci/run's evals glob").to.be.a('string');
    const [head, alternatives, tail] = /^(.*)\{([^}]+)\}(.*)$/.exec(glob!)!.slice(1) as [string, string, string];
    // Every file the second lane runs is an evaluation; those it does not run stay in the first lane's npm test.
    expect(evals.specs).to.include.members(alternatives.split(',').map((a) => `${head}${a}${tail}`));
    expect(ci).to.match(/on_node 24 npm test -- --ignore "\$evals"/);
    expect(ci).to.match(/on_node 24 bash -c "npx mocha \$evals"/);
  });

  it('every tier starts with the setup, as npm test does', () => {
    for (const name of ['test', 'test:core', 'test:heavy', 'test:evals']) expect(scripts[name], name).to.match(/^bash scripts\/setup\.sh && /);
  });
});
