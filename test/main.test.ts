/**
 * `npm start` as a newcomer meets it: the process starts on the embedded defaults (memory store, bundled
 * demo upstream), prints a demo PAT and the operator token, the README's first calls work with them, and
 * SIGHUP reloads the configuration.
 */
import { expect } from 'chai';
import { configRoot, editFile } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/process.js';
import { until } from './helpers/wait.js';

describe('npm start (embedded defaults)', function () {
  // The gateway process's start, which its helper gives up to a minute (START_MS) on a busy machine.
  this.timeout(90_000);
  let gw: GatewayProcess;
  let root: string;
  const grab = (re: RegExp) => re.exec(gw.stdout())?.[1];

  before(async () => {
    root = configRoot();
    gw = await spawnGateway(root, { PORTCULLIS_ADMIN_TOKEN: '' });
    await gw.output(/export PAT=/);
  });
  after(() => gw.stop());

  it('prints the API address, the operator token and a demo PAT that works', async () => {
    const api = grab(/serving the API on (\S+)/)!;
    const pat = grab(/demo PAT \(blue team\): (\S+)/)!;
    expect(grab(/operator token \(generated[^)]*\): (\S+)/)).to.match(/^pcl_admin_/);
    expect(pat).to.match(/^pcl_pat_/);
    const models = (await (await fetch(`${api}/v1/models`)).json()) as { data: unknown[] };
    expect(models.data).to.have.length(4);
    const res = await fetch(`${api}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${pat}` },
      body: JSON.stringify({ model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'Review this diff' }] }),
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; billing: string };
    expect(body.choices[0]!.message.content).to.contain('demo');
    expect(body.billing).to.equal('free');
  });

  it('prints every listener at one address that works, from a browser too', async () => {
    for (const host of ['api', 'auth', 'console', 'site', 'graph', 'admin']) {
      expect(grab(new RegExp(`^  ${host}: +(http://\\S+)`, 'm')), host).to.match(/^http:\/\/localhost:\d+$/);
    }
    expect(
      gw
        .stdout()
        .match(/http:\/\/\S+:(\d+)/g)!
        .filter((u) => u.endsWith(`:${new URL(grab(/^ {2}console: +(\S+)/m)!).port}`)),
      'one console address',
    ).to.have.length(1);
    const auth = grab(/^ {2}auth: +(\S+)/m)!;
    expect((await fetch(`${auth}/ready`)).status).to.equal(404);
    // The console page loads, and the API lets that page call it with its cookie (the CORS rule): what failed
    // when the banner's console line was the bound address 127.0.0.1.
    const consoleUrl = grab(/^ {2}console: +(\S+) {2}console \(open it in a browser\)$/m)!;
    expect((await fetch(`${consoleUrl}/`)).headers.get('content-security-policy')).to.contain("frame-ancestors 'none'");
    const api = grab(/^ {2}api: +(\S+)/m)!;
    const preflight = await fetch(`${api}/v1/research/status`, { method: 'OPTIONS', headers: { origin: consoleUrl, 'access-control-request-method': 'GET' } });
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(consoleUrl);
  });

  it('reloads on SIGHUP', async () => {
    const api = grab(/serving the API on (\S+)/)!;
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace('      # red-whitehacker-b has no origin', '      red-whitehacker-b: {}\n      # red-whitehacker-b has no origin'),
    );
    gw.child.kill('SIGHUP');
    // The reload is asynchronous: the catalog answers "served" once the new configuration is live.
    await until(
      async () => {
        const { data } = (await (await fetch(`${api}/v1/models`)).json()) as { data: Array<{ id: string; availability: string }> };
        return data.find((m) => m.id === 'red-whitehacker-b')!.availability === 'served';
      },
      { what: 'red-whitehacker-b to be served after SIGHUP' },
    );
  });
});
