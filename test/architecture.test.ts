/**
 * The chat path's layering, read from the import lines of src/: the stages adapt HTTP to the call, so no
 * module outside src/stages and src/app imports a stage (domain code imports src/call and src/openai
 * instead); and no two modules import each other, directly or round a loop — a cycle is how a stage came to
 * reach forward into a later one. The two loops among the guard's detectors predate this rule and are
 * listed by name, so a new loop anywhere, or one of those growing, fails here.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`, type-only ones included.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

/** Each source file (relative to src/) and the source files it imports. */
function importGraph(): Map<string, string[]> {
  const files = sources(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (known.has(target)) targets.add(relative(SRC, target));
    }
    graph.set(relative(SRC, file), [...targets]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Loops older than this rule, inside the guard's detectors. */
const KNOWN_LOOPS = [
  ['guard/intent-detectors.ts', 'guard/lexical.ts', 'guard/model/intent-model.ts', 'guard/model/pool.ts', 'guard/types.ts'],
  ['guard/credentials.ts', 'guard/generic.ts', 'guard/secrets.ts'],
].map((loop) => loop.join(' '));

describe('architecture', () => {
  const graph = importGraph();

  it('finds the chat path in the import graph (the reader works)', () => {
    expect(graph.get('app/api.ts')).to.include.members(['stages/identify.ts', 'stages/meter.ts', 'stages/respond.ts']);
    expect(graph.get('stages/meter.ts')).to.include.members(['call/call.ts', 'call/refusal.ts']);
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
        ]),
      ),
    ).to.deep.equal([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('has no module outside src/stages and src/app importing a stage', () => {
    const offenders = [...graph]
      .filter(([file]) => !file.startsWith('stages/') && !file.startsWith('app/'))
      .flatMap(([file, targets]) => targets.filter((t) => t.startsWith('stages/')).map((t) => `${file} -> ${t}`));
    expect(offenders).to.deep.equal([]);
  });

  it('has no stage importing another stage', () => {
    const offenders = [...graph]
      .filter(([file]) => file.startsWith('stages/'))
      .flatMap(([file, targets]) => targets.filter((t) => t.startsWith('stages/')).map((t) => `${file} -> ${t}`));
    expect(offenders).to.deep.equal([]);
  });

  it('has no import cycle in src/ besides the known loops of the guard', () => {
    const loops = cycles(graph).map((loop) => loop.join(' '));
    expect(loops.filter((loop) => !KNOWN_LOOPS.includes(loop))).to.deep.equal([]);
  });
});
