/**
 * Which store the gateway runs on is asked in one place, src/app/wire.ts, which picks every capability's
 * implementation to match: no other module tests a store's class, so no capability's interface names its
 * backends and a new backend changes one file.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from '../helpers/gateway.js';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the store is chosen in one place', () => {
  it("tests a store's class only in src/app/wire.ts", () => {
    const asks = /instanceof\s+(RedisStore|MemoryStore)\b/;
    const offenders = files(join(REPO, 'src'))
      .map((f) => relative(REPO, f))
      .filter((f) => f !== join('src', 'app', 'wire.ts') && asks.test(readFileSync(join(REPO, f), 'utf8')));
    expect(offenders).to.deep.equal([]);
  });
});
