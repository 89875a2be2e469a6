/**
 * The repository stands alone: its interface and its readings of that interface live in docs/, in its own
 * words, so nothing committed may send a reader to a document outside it or to a tracker's issue number
 * (which a fresh clone cannot open). It also checks that every relative link in the Markdown docs resolves,
 * since a newcomer follows those first.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO } from './helpers/gateway.js';

const tracked = execFileSync('git', ['ls-files'], { cwd: REPO, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.endsWith('package-lock.json') && !/\.(png|jpg|gz|wasm|ico)$/.test(f));

describe('repository stands alone', () => {
  it('points at no document outside it and at no issue number', () => {
    const outside = /(\.\.\/)?shared\/(spec|design)\/|architecture habit \d|\bissues? \(?#\d+|\(#\d+\)/i;
    const offenders: string[] = [];
    for (const file of tracked) {
      // A tracked symlink to a folder (the Helm chart's files/) is not a document.
      if (file === 'test/repository.test.ts' || !existsSync(join(REPO, file)) || statSync(join(REPO, file)).isDirectory()) continue;
      // Prompts vendored as evaluation and training data are other people's text, not documents: a red-team row
      // may well be a bot command that names a ticket ("Issue #77: ...").
      if (/^test\/fixtures\/guard\/.*\.(jsonl|tsv)$/.test(file)) continue;
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(offenders).to.deep.equal([]);
  });

  it('has no broken relative link in its Markdown', () => {
    const broken: string[] = [];
    for (const file of tracked.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(REPO, file), 'utf8');
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)\s]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        if (!existsSync(join(REPO, dirname(file), target))) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('describes every src folder in docs/contributing.md', () => {
    const layout = readFileSync(join(REPO, 'docs/contributing.md'), 'utf8');
    const folders = readdirSync(join(REPO, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}`);
    expect(folders.filter((f) => !new RegExp(`^${f} `, 'm').test(layout))).to.deep.equal([]);
  });
});
