/**
 * malloc's free holes given back on a timer (src/malloc-trim.ts), as an operator sees it on /metrics: a serving
 * process trims once it has started and then every PORTCULLIS_MALLOC_TRIM_SECONDS, whether or not the intent
 * model is configured, in every worker under PORTCULLIS_WORKERS; 0 turns it off; without the encoder's binding installed the gateway serves as before
 * and says the trim is unavailable; a value that is not a number of seconds stops the start with one line.
 * What the trims give back (RSS) is measured in bench/README.md, not asserted here.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, FREE_PORTS, REPO } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/process.js';
import { until } from './helpers/wait.js';

const TOKEN = 'trim-test-operator-token';

async function scrape(gw: GatewayProcess): Promise<{ available: number; trims: number; timed: number }> {
  const res = await fetch(`${gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).to.equal(200);
  const text = await res.text();
  const available = Number(/^portcullis_malloc_trim_available (\S+)$/m.exec(text)?.[1]);
  const trims = [...text.matchAll(/^portcullis_malloc_trims_total\{result="(?:released|none)"\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  // Each trim's time on the main thread, one observation per trim.
  const timed = Number(/^portcullis_malloc_trim_duration_seconds_count (\S+)$/m.exec(text)?.[1] ?? 0);
  return { available, trims, timed };
}

describe('giving malloc memory back on a timer', function () {
  this.timeout(120_000);

  it('trims once started and again on its timer, with the intent model configured, and /metrics counts the trims', async () => {
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: TOKEN, PORTCULLIS_MALLOC_TRIM_SECONDS: '1' });
    try {
      const first = await scrape(gw);
      expect(first.available).to.equal(1);
      expect(first.trims).to.be.at.least(1);
      expect(first.timed).to.equal(first.trims);
      await until(async () => (await scrape(gw)).trims >= first.trims + 2, { what: 'two more trims on the timer' });
      expect((await fetch(`${gw.apiUrl}/healthz`)).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('trims without the intent model configured: the binding is loaded for the trim alone', async () => {
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: TOKEN, PORTCULLIS_INTENT_MODEL: 'off' });
    try {
      const { available, trims } = await scrape(gw);
      expect(available).to.equal(1);
      expect(trims).to.be.at.least(1);
    } finally {
      await gw.stop();
    }
  });

  it('trims in every worker under PORTCULLIS_WORKERS, and the scrape says so for all of them at once', async () => {
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: TOKEN, PORTCULLIS_WORKERS: '2' });
    try {
      // Each worker trimmed once it had started; the supervisor adds their series up (available: the least).
      const { available, trims } = await until(
        async () => {
          const m = await scrape(gw);
          return m.trims >= 2 ? m : null;
        },
        { what: 'a trim in each of the two workers' },
      );
      expect(available).to.equal(1);
      expect(trims).to.be.at.least(2);
    } finally {
      await gw.stop();
    }
  });

  it('never trims with PORTCULLIS_MALLOC_TRIM_SECONDS=0', async () => {
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: TOKEN, PORTCULLIS_MALLOC_TRIM_SECONDS: '0' });
    try {
      expect(await scrape(gw)).to.deep.equal({ available: 0, trims: 0, timed: 0 });
    } finally {
      await gw.stop();
    }
  });

  it('serves as before where the binding is not installed (the intent model off), and says the trim is unavailable', async () => {
    const models = mkdtempSync(join(tmpdir(), 'portcullis-no-models-'));
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: TOKEN, PORTCULLIS_INTENT_MODEL: 'off', PORTCULLIS_MODELS: models });
    try {
      expect(await scrape(gw)).to.deep.equal({ available: 0, trims: 0, timed: 0 });
      expect((await fetch(`${gw.apiUrl}/healthz`)).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('refuses to start, in one line, when PORTCULLIS_MALLOC_TRIM_SECONDS is not a number of seconds', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
      env: { ...process.env, PORTCULLIS_ROOT: configRoot(), ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error', PORTCULLIS_MALLOC_TRIM_SECONDS: '10s' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(78);
    expect(err).to.contain('PORTCULLIS_MALLOC_TRIM_SECONDS must be a whole number of seconds (0 turns the trim off), not "10s"');
  });
});
