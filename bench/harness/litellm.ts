/**
 * Row R5 of the bench: the LiteLLM proxy (PyPI `litellm[proxy]`, pinned), installed by the bench into a
 * virtual environment at bench/.venv (ignored by git) and started as `litellm --config <yaml>` with one
 * worker, its one model pointed at the bench's mock through LiteLLM's OpenAI-compatible provider
 * (`openai/<model>` with `api_base`). Callers send the master key as a Bearer token.
 *
 * The install: `python3 -m venv`, then pip, `litellm[proxy]==LITELLM` — the same LiteLLM the client suite
 * pins (test/clients/requirements.txt), with its proxy extras. (Newer releases ask for a certifi newer than
 * the registry here holds; 1.107.0 was a compromised release.) The full bench installs when the venv lacks
 * the pinned version (about a minute); the quick run (the tests) uses the venv only if it is already there,
 * and otherwise skips R5 and says so.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './portcullis.js';
import { httpAnswers, startServer, type Pinning, type ServerProcess } from './processes.js';

export const LITELLM = '1.83.0';
const VENV = join(REPO, 'bench/.venv');
const MARKER = join(VENV, 'portcullis-bench-litellm');
export const LITELLM_MASTER_KEY = 'sk-bench-litellm-master-0123456789abcdef';

/** True when bench/.venv holds the pinned LiteLLM. */
export function litellmInstalled(): boolean {
  return existsSync(MARKER) && readFileSync(MARKER, 'utf8').trim() === LITELLM && existsSync(join(VENV, 'bin/litellm'));
}

/** Installs the pinned LiteLLM proxy into bench/.venv unless it is there (a few tens of seconds). */
export function installLitellm(log: (line: string) => void): void {
  if (litellmInstalled()) return;
  log(`  installing litellm[proxy]==${LITELLM} into bench/.venv`);
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  if (!existsSync(join(VENV, 'bin/python'))) run('python3', ['-m', 'venv', VENV]);
  run(join(VENV, 'bin/pip'), ['install', '--disable-pip-version-check', '-q', `litellm[proxy]==${LITELLM}`]);
  writeFileSync(MARKER, `${LITELLM}\n`);
}

export async function startLitellm(opts: { port: number; mockBaseUrl: string; model: string; pin: Pinning }): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-litellm-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'model_list:',
      `  - model_name: ${opts.model}`,
      '    litellm_params:',
      `      model: openai/${opts.model}`,
      `      api_base: ${opts.mockBaseUrl}`,
      '      api_key: sk-bench-not-a-key',
      'litellm_settings:',
      '  drop_params: true',
      '',
    ].join('\n'),
  );
  return startServer({
    name: 'R5 LiteLLM proxy',
    command: join(VENV, 'bin/litellm'),
    args: ['--config', config, '--host', '127.0.0.1', '--port', String(opts.port), '--num_workers', '1'],
    cwd: dir,
    env: { LITELLM_MASTER_KEY, LITELLM_LOG: 'ERROR' },
    pin: opts.pin,
    ready: () => httpAnswers(`http://127.0.0.1:${opts.port}/health/liveliness`),
    timeoutMs: 120_000,
  });
}
