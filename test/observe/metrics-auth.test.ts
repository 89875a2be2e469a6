/**
 * GET /metrics on the admin listener answers only a caller with the operator token or the scrape token
 * whose SHA-256 the configuration names (metrics.scrapeTokenSha256); anyone else gets 401
 * `admin-unauthorized` and no series. The health probes stay open.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile } from '../helpers/gateway.js';

const SCRAPE_TOKEN = 'prometheus-scrape-token-for-tests-0001';

describe('/metrics needs the operator token or the scrape token', () => {
  let w: World;
  before(async () => {
    const root = configRoot();
    const hash = createHash('sha256').update(SCRAPE_TOKEN).digest('hex');
    editFile(root, 'config/gateway.yaml', (t) => `${t}\nmetrics:\n  scrapeTokenSha256: ${hash}\n`);
    w = await startWorld({ root });
  });
  after(() => w.stop());

  const scrape = (authorization?: string) => fetch(`${w.gw.adminUrl}/metrics`, { headers: authorization ? { authorization } : {} });

  it("refuses no token, a wrong one, a PAT and the scrape token's hash itself, with 401 and no series", async () => {
    const p = await w.gw.principal();
    for (const auth of [undefined, 'Bearer wrong', `Bearer ${p.token}`, `Bearer ${createHash('sha256').update(SCRAPE_TOKEN).digest('hex')}`, SCRAPE_TOKEN]) {
      const res = await scrape(auth);
      expect(res.status, String(auth)).to.equal(401);
      const text = await res.text();
      expect(JSON.parse(text).error.code).to.equal('admin-unauthorized');
      expect(text).to.not.contain('portcullis_');
    }
  });

  it('answers the operator token and the scrape token with the Prometheus text; health stays open', async () => {
    for (const token of [w.gw.adminToken, SCRAPE_TOKEN]) {
      const res = await scrape(`Bearer ${token}`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.contain('portcullis_http_requests_total');
    }
    expect((await fetch(`${w.gw.adminUrl}/healthz`)).status).to.equal(200);
    expect((await fetch(`${w.gw.adminUrl}/readyz`)).status).to.equal(200);
  });
});
