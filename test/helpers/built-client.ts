/**
 * Where scripts/setup.sh built a compiled client of the client suite (openai-java, openai-go): a directory
 * under the tools cache named after the client and the hash of its sources, computed here exactly as setup
 * computes it, so a test never runs a build of older sources. Missing means setup has not run since the
 * sources changed, and the test says so.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './gateway.js';

export function builtClient(name: string, files: string[]): string {
  const hash = createHash('sha256');
  for (const f of files) hash.update(readFileSync(join(REPO, f)));
  const tools = process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const dir = join(tools, `${name}-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(join(dir, '.built'))) throw new Error(`${dir} is missing: run bash scripts/setup.sh`);
  return dir;
}
