// Where the pinned policy tools live, for node scripts. The versions come from scripts/tools.env
// (the one place they are pinned, shared with the shell scripts); the directory from PORTCULLIS_TOOLS,
// defaulting to ~/.cache/portcullis/tools. scripts/setup.sh builds whatever is missing.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const envFile = new URL('./tools.env', import.meta.url);

/** @returns {Record<string, string>} the KEY=value pairs of scripts/tools.env */
export function readToolVersions() {
  const versions = {};
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const match = /^([A-Z_]+)=(\S+)\s*$/.exec(line);
    if (match) versions[match[1]] = match[2];
  }
  return versions;
}

export const toolsDir = process.env.PORTCULLIS_TOOLS || join(homedir(), '.cache', 'portcullis', 'tools');

const versions = readToolVersions();
export const OPA_VERSION = versions.OPA_VERSION;
export const REGAL_VERSION = versions.REGAL_VERSION;

/** @param {string} name @param {string} version */
export const toolPath = (name, version) => join(toolsDir, `${name}-${version}`, name);

export const opaPath = toolPath('opa', OPA_VERSION);
export const regalPath = toolPath('regal', REGAL_VERSION);

/** Throws with the command to run when a pinned tool is not installed yet. */
export function requireTool(path) {
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (scripts/setup.sh)`);
  return path;
}
