/**
 * The gateway reaches its libraries through their public APIs only: no underscore field of Node's or
 * @koa/router's objects is read (they change without notice between versions), and no app's middleware list
 * is edited from outside it (Koa's `use` only appends, so a host's order reads top to bottom in one place:
 * src/app/host-app.ts and the host's composition file).
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from '../helpers/gateway.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('public library APIs only', () => {
  const files = sources(join(REPO, 'src')).map((path) => ({ file: relative(REPO, path), text: readFileSync(path, 'utf8') }));

  it('reads no private field of a library object (_httpMessage, _matchedRoute, ...)', () => {
    const offenders = files.flatMap(({ file, text }) =>
      text
        .split('\n')
        .map((line, i) => ({ line: line.trim(), at: `${file}:${i + 1}` }))
        .filter(({ line }) => !line.startsWith('//') && !line.startsWith('*') && /\)?\._[a-zA-Z]\w*/.test(line.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "''")))
        .map(({ at, line }) => `${at}: ${line}`),
    );
    expect(offenders).to.deep.equal([]);
  });

  it("edits no app's middleware list from outside: every host app is begun in one place and appended to", () => {
    const edits = files.filter(({ text }) => /\.middleware\.(unshift|splice|push)\(|\.middleware\s*=/.test(text)).map(({ file }) => file);
    expect(edits).to.deep.equal([]);
    const made = files.filter(({ text }) => /new Koa\(/.test(text)).map(({ file }) => file);
    expect(made).to.deep.equal(['src/app/host-app.ts']);
  });
});
