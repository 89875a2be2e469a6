/**
 * Every host of the spec on its own listener: each binds (port 0 = a free port in tests), knows its public
 * origin, and answers only its own routes; the auth host has no /ready and no /.well-known profile; hosts
 * whose issues have not landed answer 404 through the single exit. The environment overrides port and
 * origin per host.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import { HOST_NAMES } from '../../src/config/types.js';
import { REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('hosts: six listeners', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ env: { PORTCULLIS_CONSOLE_URL: 'https://console.example.test' } });
  });
  after(() => gw.close());

  it('binds every host on its own port, and derives each origin from the port actually bound', () => {
    const ports = HOST_NAMES.map((h) => Number(new URL(gw.urls[h]).port));
    expect(new Set(ports).size).to.equal(6);
    expect(ports.every((p) => p > 0)).to.equal(true);
    expect(gw.apiUrl).to.equal(gw.urls.api);
    expect(gw.adminUrl).to.equal(gw.urls.admin);
    expect(gw.origins.auth).to.equal(`http://localhost:${new URL(gw.urls.auth).port}`);
    expect(gw.origins.console).to.equal('https://console.example.test');
  });

  it('answers a route only on its host', async () => {
    expect((await fetch(`${gw.urls.api}/v1/models`)).status).to.equal(200);
    for (const host of ['auth', 'console', 'site', 'graph'] as const) {
      const res = await fetch(`${gw.urls[host]}/v1/models`);
      expect(res.status, host).to.equal(404);
      expect(await res.json()).to.deep.equal({ error: { code: 'not-found', message: 'no such route', type: 'not_found_error', param: null } });
    }
  });

  it('the auth host answers 404 on /ready and every /.well-known path', async () => {
    for (const path of ['/ready', '/.well-known/openid-configuration', '/.well-known/mcp.json', '/.well-known/webauthn']) {
      const res = await fetch(`${gw.urls.auth}${path}`);
      expect(res.status, path).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('not-found');
    }
  });
});

describe('hosts: configuration', () => {
  it('PORTCULLIS_<NAME>_PORT and _URL override each listener; PORT still sets the API port', () => {
    const cfg = loadConfig(REPO, {
      PORT: '9100',
      PORTCULLIS_AUTH_PORT: '9101',
      PORTCULLIS_AUTH_URL: 'https://auth.example.test/',
      PORTCULLIS_GRAPH_PORT: '0',
      PORTCULLIS_ADMIN_PORT: '9190',
    }).gateway.data.listeners;
    expect(cfg.api.port).to.equal(9100);
    expect(cfg.auth).to.deep.equal({ host: '127.0.0.1', port: 9101, url: 'https://auth.example.test' });
    expect(cfg.graph.port).to.equal(0);
    expect(cfg.admin.port).to.equal(9190);
    expect(cfg.console).to.deep.equal({ host: '127.0.0.1', port: 8082 });
    expect(loadConfig(REPO, { PORT: '1', PORTCULLIS_API_PORT: '2' }).gateway.data.listeners.api.port).to.equal(2);
    // PORTCULLIS_<NAME>_HOST: the bind address (an image serves the public hosts on every interface).
    const bound = loadConfig(REPO, { PORTCULLIS_API_HOST: '0.0.0.0', PORTCULLIS_GRAPH_HOST: '' }).gateway.data.listeners;
    expect(bound.api.host).to.equal('0.0.0.0');
    expect(bound.graph.host).to.equal('127.0.0.1');
    // An empty PORTCULLIS_<NAME>_URL means unset: the origin stays the default.
    expect(loadConfig(REPO, { PORTCULLIS_SITE_URL: '' }).gateway.data.listeners.site).to.not.have.property('url');
  });

  it('refuses an origin with a path, and a port that is not a number, naming the listener', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(REPO, env);
        return [];
      } catch (err) {
        return (err as { problems: string[] }).problems;
      }
    };
    expect(problems({ PORTCULLIS_SITE_URL: 'https://site.example.test/path' }).join('\n')).to.contain('/listeners/site/url');
    expect(problems({ PORTCULLIS_CONSOLE_PORT: 'eighty' })).to.deep.include('config/gateway.yaml: /listeners/console/port must be integer');
  });
});
