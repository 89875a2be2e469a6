/**
 * Real Python clients, unchanged, against a live gateway (recording upstream in `agent` mode, real Redis):
 * the official `openai` SDK, the OpenAI Agents SDK with a function tool through its chat-completions model
 * class, LiteLLM's `completion` with `api_base`, and pydantic-ai's Agent on its OpenAI chat model (token
 * counts of a plain and a streamed run, which it adds up across chunks), and the MCP Python SDK against the
 * site host's /mcp (how it negotiates the protocol revision). Each runs test/clients/python/clients.py in the virtual
 * environment scripts/setup.sh creates (test/clients/.venv, pinned versions) and reports what its plain call,
 * streamed call, tool round trip and typed error observed.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startWorld, type World } from '../helpers/world.js';
import { REPO } from '../helpers/gateway.js';

const PYTHON = join(REPO, 'test/clients/.venv/bin/python');
const SCRIPT = join(REPO, 'test/clients/python/clients.py');

interface Report {
  plain: string;
  stream: { text: string; usage: number | null };
  tools: string;
  error: { class: string; module: string; status: number | null; code: string | null; typed: boolean } | null;
}

describe('clients (Python): openai, openai-agents, LiteLLM, pydantic-ai, MCP SDK against a live gateway', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;

  before(async () => {
    expect(existsSync(PYTHON), 'test/clients/.venv is missing: run bash scripts/setup.sh').to.equal(true);
    w = await startWorld();
    token = (await w.gw.principal()).token;
    await w.upstream.behave({ mode: 'agent' });
  });
  after(() => w.stop());

  const run = async <R = Report>(client: string): Promise<R> => {
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, client], {
      env: { ...process.env, PORTCULLIS_BASE_URL: `${w.gw.apiUrl}/v1`, PORTCULLIS_TOKEN: token, PORTCULLIS_MCP_URL: `${w.gw.urls.site}/mcp` },
      timeout: 100_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as R;
  };

  it('openai (Python SDK): plain, streamed with usage, tool round trip, AuthenticationError', async () => {
    const r = await run('openai');
    expect(r.plain).to.match(/^recorded answer/);
    expect(r.stream).to.deep.equal({ text: r.stream.text, usage: 18 });
    expect(r.stream.text).to.match(/^recorded answer/);
    expect(r.tools).to.equal('the tool said: sunny in Paris');
    expect(r.error).to.deep.include({ class: 'AuthenticationError', status: 401, code: 'invalid-token', typed: true });
  });

  it('openai-agents (OpenAIChatCompletionsModel with a function tool): plain, streamed, tool round trip, AuthenticationError', async () => {
    const r = await run('agents');
    expect(r.plain).to.match(/^recorded answer/);
    expect(r.stream.text).to.match(/^recorded answer/);
    expect(r.tools).to.equal('the tool said: sunny in Paris');
    expect(r.error).to.deep.include({ class: 'AuthenticationError', status: 401, code: 'invalid-token', typed: true });
  });

  it('LiteLLM (completion with api_base): plain, streamed with usage, tool round trip, its AuthenticationError', async () => {
    const r = await run('litellm');
    expect(r.plain).to.match(/^recorded answer/);
    expect(r.stream.text).to.match(/^recorded answer/);
    expect(r.stream.usage).to.equal(18);
    expect(r.tools).to.equal('the tool said: sunny in Paris');
    expect(r.error).to.deep.include({ class: 'AuthenticationError', module: 'litellm.exceptions', status: 401, typed: true });
  });

  it("pydantic-ai (Agent on OpenAIChatModel): plain and streamed runs report the upstream's token counts, once", async () => {
    type Counted = { text: string; usage: { prompt: number; completion: number; total: number } };
    const r = await run<{ plain: Counted; stream: Counted }>('pydantic-ai');
    expect(r.plain.text).to.match(/^recorded answer/);
    expect(r.plain.usage).to.deep.equal({ prompt: 11, completion: 7, total: 18 });
    expect(r.stream.text).to.match(/^recorded answer/);
    expect(r.stream.usage).to.deep.equal({ prompt: 11, completion: 7, total: 18 });
  });

  it('MCP Python SDK (Client in its default auto mode): its server/discover probe is answered, not refused, and it settles on 2025-11-25', async () => {
    type Exchange = { methods: Array<string | null>; version: string | null; status: number };
    const r = await run<{ protocolVersion: string; tools: string[]; modelsStatus: number; exchanges: Exchange[] }>('mcp');
    expect(r.protocolVersion).to.equal('2025-11-25');
    expect(r.tools).to.include('svc_models');
    expect(r.modelsStatus).to.equal(200);
    // The probe at 2026-07-28 is answered with the supported revisions (no 4xx), then the handshake.
    expect(r.exchanges[0]).to.deep.include({ methods: ['server/discover'], status: 200 });
    expect(r.exchanges[1]).to.deep.include({ methods: ['initialize'], status: 200 });
    expect(r.exchanges.filter((e) => e.status >= 400)).to.deep.equal([]);
    expect(r.exchanges.filter((e) => e.methods.includes('server/discover') || e.methods.includes('initialize'))).to.have.length(2);
  });
});
