/**
 * What a call does not use is not loaded at start (docs/operators.md, Memory): a gateway started as an operator
 * starts it (src/main.ts in its own process) without a Stripe key and without tracing has loaded neither the
 * Stripe SDK, nor the OpenTelemetry SDK, nor the WebAuthn library, nor the Redis modules beyond the client (about
 * 1 MiB of heap the store never uses), nor the Public Suffix List (the session cookie's scope), nor BIP-39 (the
 * recovery phrase's derivation, done by clients), nor the OpenAPI document's tables; the first passkey ceremony
 * loads the WebAuthn library, the first cookie set the list, the first `GET /openapi.json` the document, and
 * each answers as always. What was loaded is read through Node's module hooks (test/helpers/loaded-modules.mjs).
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, FREE_PORTS, REPO } from '../helpers/gateway.js';

const loadedFrom = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const has = (urls: string[], part: string) => urls.some((u) => u.includes(part));

describe('modules a call does not use are loaded on first use', function () {
  this.timeout(90_000);
  let child: ChildProcess;
  let dir: string;

  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a gateway without Stripe or tracing starts without their SDKs or what only sign-ins and the OpenAPI document use, and loads each on first use', async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-loaded-'));
    const file = join(dir, 'loaded.txt');
    const env: Record<string, string | undefined> = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('STRIPE_') || k.startsWith('OTEL_')) delete env[k];
    child = spawn(process.execPath, ['--import', 'tsx', '--import', join(REPO, 'test/helpers/loaded-modules.mjs'), join(REPO, 'src/main.ts')], {
      env: { ...env, PORTCULLIS_ROOT: configRoot(), ...FREE_PORTS, PORTCULLIS_WATCH: '0', PORTCULLIS_STORE: 'memory', LOADED_MODULES_FILE: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.resume();
    const t0 = Date.now();
    while (!/operator token/.test(out)) {
      if (child.exitCode !== null) throw new Error(`the gateway exited: ${out}`);
      if (Date.now() - t0 > 60_000) throw new Error('the gateway did not start');
      await new Promise((r) => setTimeout(r, 50));
    }

    const atStart = loadedFrom(file);
    // The hooks saw the gateway's own modules, the passkey routes among them: what is absent was not loaded.
    expect(has(atStart, '/src/routes/passkey.ts'), 'the hooks record the gateway').to.equal(true);
    expect(has(atStart, '/node_modules/stripe/'), 'the Stripe SDK').to.equal(false);
    expect(has(atStart, '/node_modules/@opentelemetry/sdk-trace-node/'), 'the OpenTelemetry SDK').to.equal(false);
    expect(has(atStart, '/node_modules/@simplewebauthn/server/'), 'the WebAuthn library').to.equal(false);
    // The store speaks plain Redis: the client alone, not the `redis` package's JSON, search, time-series and Bloom modules.
    expect(has(atStart, '/node_modules/@redis/client/'), 'the Redis client').to.equal(true);
    for (const m of ['json', 'search', 'time-series', 'bloom']) expect(has(atStart, `/node_modules/@redis/${m}/`), `@redis/${m}`).to.equal(false);
    expect(has(atStart, '/node_modules/tldts/'), 'the Public Suffix List').to.equal(false);
    expect(has(atStart, '/node_modules/@scure/bip39/'), 'BIP-39').to.equal(false);
    expect(has(atStart, '/src/openapi/document.ts'), 'the OpenAPI document').to.equal(false);

    const line = /^\s+auth:\s+(\S+)(?: \(listening on (\S+)\))?/m.exec(out)!;
    const origin = line[1]!;
    const url = line[2] ?? origin.replace('localhost', '127.0.0.1');
    const res = await fetch(`${url}/v1/passkey/register/options`, { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: '{}' });
    const body = (await res.json()) as { challenge?: string; rp?: { id: string } };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.challenge).to.be.a('string').and.not.equal('');
    expect(has(loadedFrom(file), '/node_modules/@simplewebauthn/server/'), 'loaded by the first ceremony').to.equal(true);

    // Signing out clears the cookie: the first cookie the process sets, with the scope it always had.
    const end = await fetch(`${url}/v1/session/end`, { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: '{}' });
    expect(end.status).to.equal(200);
    expect(end.headers.get('set-cookie')).to.match(/=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
    expect(has(loadedFrom(file), '/node_modules/tldts/'), 'loaded by the first cookie').to.equal(true);

    const api = /^\s+api:\s+(\S+)(?: \(listening on (\S+)\))?/m.exec(out)!;
    const doc = await fetch(`${api[2] ?? api[1]!.replace('localhost', '127.0.0.1')}/openapi.json`);
    expect(doc.status).to.equal(200);
    expect(((await doc.json()) as { openapi?: string }).openapi).to.match(/^3\.1/);
    expect(has(loadedFrom(file), '/src/openapi/document.ts'), 'loaded by the first request for it').to.equal(true);

    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  });
});
