/**
 * GET /v1/knowledge/search and /v1/knowledge/context as a browser on another origin sees them: public,
 * `access-control-allow-origin: *` on answers and errors, a correct preflight, no credentials honoured,
 * bad queries refused by name with 400, unknown ids 404.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';

describe('knowledge routes (API host, public, CORS open)', () => {
  let w: World;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${w.gw.apiUrl}${path}`, { headers });
  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  it('searches: CWE-89 first for "sql injection", with id, kind, title, snippet and score, paginated', async () => {
    const res = await get('/v1/knowledge/search?q=sql+injection&limit=3', { origin: 'https://agent.example' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    const body = (await res.json()) as any;
    expect(body).to.include({ object: 'list', query: 'sql injection', offset: 0, limit: 3 });
    expect(body.data).to.have.length(3);
    expect(Object.keys(body.data[0]).sort()).to.deep.equal(['id', 'kind', 'score', 'snippet', 'title']);
    expect(body.data[0]).to.include({ id: 'CWE-89', kind: 'cwe' });
    const next = (await (await get('/v1/knowledge/search?q=sql+injection&limit=2&offset=2')).json()) as any;
    expect(next.data[0].id).to.equal(body.data[2].id);
  });

  it('finds an ATT&CK technique by id and by name, and a KEV entry by its CVE id', async () => {
    const first = async (q: string) => ((await (await get(`/v1/knowledge/search?q=${encodeURIComponent(q)}`)).json()) as any).data[0];
    expect(await first('T1190')).to.include({ id: 'T1190', kind: 'attack-technique' });
    expect(await first('Exploit Public-Facing Application')).to.include({ id: 'T1190' });
    const kev = await first('CVE-2023-34362');
    expect(kev).to.include({ id: 'CVE-2023-34362', kind: 'cve' });
    expect(kev.title).to.contain('MOVEit');
  });

  it('context: full text and typed relations; CAPEC-66 is related to CWE-89; a KEV CVE points at its CWE', async () => {
    const cwe = (await (await get('/v1/knowledge/context?id=CWE-89')).json()) as any;
    expect(cwe).to.include({ id: 'CWE-89', kind: 'cwe', source: 'cwe' });
    expect(cwe.text).to.contain('SQL command');
    expect(cwe.relations).to.deep.include({ type: 'related-attack-pattern', direction: 'out', id: 'CAPEC-66', kind: 'capec', title: 'CAPEC-66' });
    expect(cwe.relations.some((r: any) => r.type === 'child-of' && r.id === 'CWE-943')).to.equal(true);
    const capec = (await (await get('/v1/knowledge/context?id=capec-66')).json()) as any;
    expect(capec.id).to.equal('CAPEC-66');
    expect(capec.relations.map((r: any) => r.id)).to.include('CWE-89');
    const cve = (await (await get('/v1/knowledge/context?id=CVE-2023-34362')).json()) as any;
    expect(cve.kev).to.include({ vendor: 'Progress' });
    expect(cve.relations).to.deep.include({ type: 'weakness', direction: 'out', id: 'CWE-89', kind: 'cwe', title: cwe.title });
  });

  it('answers a CORS preflight from a foreign origin: 204, GET allowed, no credentials, nothing else run', async () => {
    for (const path of ['/v1/knowledge/search', '/v1/knowledge/context']) {
      const res = await fetch(`${w.gw.apiUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'content-type' },
      });
      expect(res.status, path).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-methods')).to.contain('GET');
      expect(res.headers.get('access-control-allow-headers')).to.contain('content-type');
      expect(res.headers.get('access-control-allow-headers')).to.not.contain('authorization');
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    }
  });

  it('ignores credentials: a bogus bearer token or cookie changes nothing', async () => {
    const plain = await (await get('/v1/knowledge/context?id=T1190')).json();
    const withJunk = await get('/v1/knowledge/context?id=T1190', { authorization: 'Bearer pcl_pat_not-a-token', cookie: 'sid=whatever' });
    expect(withJunk.status).to.equal(200);
    expect(await withJunk.json()).to.deep.equal(plain);
  });

  it('refuses bad queries with 400 invalid-knowledge-query naming the field, CORS header included', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/knowledge/search', 'q'],
      ['/v1/knowledge/search?q=', 'q'],
      [`/v1/knowledge/search?q=${'a'.repeat(257)}`, 'q'],
      ['/v1/knowledge/search?q=a&limit=0', 'limit'],
      ['/v1/knowledge/search?q=a&limit=ten', 'limit'],
      ['/v1/knowledge/search?q=a&offset=-1', 'offset'],
      ['/v1/knowledge/search?q=a&kind=malware', 'kind'],
      ['/v1/knowledge/search?q=a&q=b', 'q'],
      ['/v1/knowledge/search?q=a&debug=1', 'debug'],
      ['/v1/knowledge/context', 'id'],
      ['/v1/knowledge/context?id=%3Cscript%3E', 'id'],
    ];
    for (const [path, field] of cases) {
      const res = await get(path);
      expect(res.status, path).to.equal(400);
      expect(res.headers.get('access-control-allow-origin'), path).to.equal('*');
      const body = (await res.json()) as any;
      expect(body.error.code, path).to.equal('invalid-knowledge-query');
      expect(body.error.message, path).to.match(new RegExp(`^${field}:`));
    }
  });

  it('answers 404 knowledge-not-found for an id the evidence does not hold', async () => {
    const res = await get('/v1/knowledge/context?id=CWE-999999');
    expect(res.status).to.equal(404);
    expect(((await res.json()) as any).error.code).to.equal('knowledge-not-found');
  });

  it('answers 405 for other methods on the knowledge routes', async () => {
    const res = await fetch(`${w.gw.apiUrl}/v1/knowledge/search?q=a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).to.equal(405);
    expect(((await res.json()) as any).error.code).to.equal('method-not-allowed');
  });
});
