/**
 * The knowledge capability over the real vendored evidence (data/knowledge/evidence.json.gz): the search
 * ranks what a security researcher expects first, ids are matched whole, the relations the sources carry
 * are there in both directions, ids known only as references are nodes, and graph walks stay bounded.
 */
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { sharedKnowledge } from '../../src/knowledge/index.js';
import { KnowledgeSearch } from '../../src/knowledge/search.js';
import { graphNode, neighbours, shortestPath } from '../../src/knowledge/graph.js';
import { readNeighboursArgs, readPathArgs, readSearchArgs, readSearchQuery } from '../../src/knowledge/schemas.js';
import { GatewayError } from '../../src/errors.js';

describe('knowledge: evidence, search and graph (real data)', function () {
  // A test builds the search index from all the evidence four times: 7 s in the last CI, 14 s on a loaded
  // two-core machine here, half of mocha's 30 s default.
  this.timeout(90_000);
  const k = sharedKnowledge();
  const search = (q: string, limit = 10, offset = 0) => k.search.search(q, { limit, offset });

  it('holds every source with its version: CWE 4.15, ATT&CK Enterprise 18.1, KEV 2025.08.25', () => {
    expect(k.versions['cwe']).to.include({ version: '4.15' });
    expect(k.versions['attack']).to.include({ version: '18.1', domain: 'enterprise' });
    expect(k.versions['kev']).to.include({ version: '2025.08.25' });
    expect(k.stats.nodes).to.be.greaterThan(7000);
    expect(k.stats.edges).to.be.greaterThan(18000);
  });

  it('finds CWE-89 first for "sql injection", with a snippet from its text and a score', () => {
    const page = search('sql injection', 5);
    expect(page.data[0]).to.include({ id: 'CWE-89', kind: 'cwe' });
    expect(page.data[0]!.snippet.toLowerCase()).to.contain('sql');
    expect(page.data[0]!.score).to.be.greaterThan(page.data[4]!.score);
    expect(page.total).to.be.greaterThan(5);
  });

  it('stems and prefix-matches: "injected queries" and "deserializ" find what the full words find', () => {
    expect(search('injected sql queries').data.map((h) => h.id)).to.include('CWE-89');
    expect(search('deserializ', 20).data.some((h) => /deserializ/i.test(h.title))).to.equal(true);
  });

  it('bounds a query: repeated terms and function words change nothing, and only the first 16 distinct terms count', () => {
    expect(search('the SQL of injection sql SQL sql')).to.deep.equal(search('sql injection'));
    const words = 'buffer overflow heap stack memory corruption pointer integer underflow format string race condition kernel driver firmware bootloader'.split(
      ' ',
    );
    expect(words.length).to.be.greaterThan(16);
    expect(search(words.join(' '))).to.deep.equal(search(words.slice(0, 16).join(' ')));
  });

  it('matches an id whole: CWE-89 finds CWE-89 and not CWE-890 or CWE-189', () => {
    const ids = search('CWE-89').data.map((h) => h.id);
    expect(ids[0]).to.equal('CWE-89');
    expect(ids).to.not.include.members(['CWE-890', 'CWE-189', 'CWE-88']);
  });

  it('finds an ATT&CK technique by its id and by its name', () => {
    expect(search('T1190').data[0]).to.include({ id: 'T1190', kind: 'attack-technique', title: 'Exploit Public-Facing Application' });
    expect(search('exploit public-facing application').data[0]!.id).to.equal('T1190');
  });

  it('finds a KEV entry by its CVE id, described from the KEV catalog', () => {
    const hit = search('CVE-2021-44228').data[0]!;
    expect(hit).to.include({ id: 'CVE-2021-44228', kind: 'cve' });
    expect(hit.title).to.contain('Log4j');
    expect(k.evidence.find('CVE-2021-44228')!.kev).to.include({ vendor: 'Apache' });
  });

  it('pages: offset and limit cut the same ranking', () => {
    const all = search('buffer overflow', 20).data.map((h) => h.id);
    const second = search('buffer overflow', 10, 10).data.map((h) => h.id);
    expect(second).to.deep.equal(all.slice(10, 20));
  });

  it('filters by kind', () => {
    const page = k.search.search('injection', { limit: 10, offset: 0, kind: 'attack-technique' });
    expect(page.data.length).to.be.greaterThan(0);
    expect(page.data.every((h) => h.kind === 'attack-technique')).to.equal(true);
  });

  it('CAPEC-66 is a neighbour of CWE-89, and a node although CWE only names it', () => {
    const walk = neighbours(k.evidence, readNeighboursArgs({ id: 'CWE-89', types: ['related-attack-pattern'] }));
    expect(walk.nodes.map((n) => n.id)).to.include('CAPEC-66');
    const capec = graphNode(k.evidence, 'CAPEC-66');
    expect(capec).to.include({ kind: 'capec' });
    expect(capec.edges['related-attack-pattern']!.in).to.be.greaterThan(0);
  });

  it('carries the typed relations: CWE parent, observed CVE, KEV CVE -> CWE, mitigation -> technique, sub-technique', () => {
    const rel = (id: string) => k.evidence.relations.get(id)!.map((r) => `${r.direction} ${r.type} ${r.id}`);
    expect(rel('CWE-89')).to.include.members(['out child-of CWE-943', 'out observed-example CVE-2021-42258', 'in weakness CVE-2021-42258']);
    expect(rel('T1190')).to.include('in mitigates M1048');
    expect(rel('T1059.001')).to.include('out subtechnique-of T1059');
  });

  it('holds GenAI incidents mapped to OWASP LLM categories and MITRE ATLAS techniques, ids known by mention as nodes', () => {
    const hits = search('prompt injection', 10).data;
    expect(hits.some((h) => h.kind === 'ai-incident')).to.equal(true);
    const rel = k.evidence.relations.get('INC-05172')!.map((r) => `${r.type} ${r.id}`);
    expect(rel).to.include('owasp-llm-category LLM01');
    expect(search('LLM01').data[0]).to.include({ id: 'LLM01', kind: 'owasp-llm' });
    const atlas = search('AML.T0051').data[0]!;
    expect(atlas).to.include({ id: 'AML.T0051', kind: 'atlas-technique' });
    expect(k.evidence.relations.get('AML.T0051')!.every((r) => r.direction === 'in' && r.type === 'uses-atlas-technique')).to.equal(true);
    expect(k.versions['genaiIncidents']).to.include({ version: '2.13.0' });
  });

  it('finds the shortest path from a KEV CVE to the weakness class above its CWE', () => {
    const path = shortestPath(k.evidence, readPathArgs({ from: 'CVE-2021-42258', to: 'CWE-74' }));
    expect(path.found).to.equal(true);
    expect(path.nodes.map((n) => n.id)).to.deep.equal(['CVE-2021-42258', 'CWE-89', 'CWE-943', 'CWE-74']);
    expect(path.edges[0]).to.deep.equal({ from: 'CVE-2021-42258', type: 'weakness', to: 'CWE-89' });
  });

  it('bounds walks: depth and limit are capped by the schema, and a capped walk says truncated', () => {
    const walk = neighbours(k.evidence, readNeighboursArgs({ id: 'CWE-20', depth: 3, limit: 5 }));
    expect(walk.count).to.equal(5);
    expect(walk.truncated).to.equal(true);
    expect(() => readNeighboursArgs({ id: 'CWE-20', depth: 4 }))
      .to.throw(GatewayError)
      .with.property('code', 'invalid-knowledge-query');
    expect(() => readPathArgs({ from: 'CWE-89', to: 'T1190', maxDepth: 50 })).to.throw(GatewayError);
    const none = shortestPath(k.evidence, readPathArgs({ from: 'CWE-89', to: 'M1048', maxDepth: 1 }));
    expect(none).to.include({ found: false, length: null });
  });

  it('reads a serialized index built from the same evidence and code, and ignores a stale one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-index-'));
    const file = pathToFileURL(join(dir, 'search-index.json.gz'));
    const built = KnowledgeSearch.build(k.evidence);
    writeFileSync(file, built.serialize());
    const read = KnowledgeSearch.open(k.evidence, [file]);
    expect(read.origin).to.equal('file');
    for (const q of ['sql injection', 'T1190', 'prompt injection', 'deserializ']) {
      expect(read.search(q, { limit: 10, offset: 0 }), q).to.deep.equal(built.search(q, { limit: 10, offset: 0 }));
    }
    // Built from other evidence (or by other indexing code): not used.
    const saved = JSON.parse(gunzipSync(built.serialize()).toString('utf8'));
    writeFileSync(file, gzipSync(JSON.stringify({ ...saved, evidence: '0'.repeat(64) })));
    expect(KnowledgeSearch.open(k.evidence, [file]).origin).to.equal('built');
    writeFileSync(file, gzipSync(JSON.stringify({ ...saved, fingerprint: 'stale' })));
    expect(KnowledgeSearch.open(k.evidence, [file]).origin).to.equal('built');
    writeFileSync(file, 'not gzip');
    expect(KnowledgeSearch.open(k.evidence, [file]).search('T1190', { limit: 1, offset: 0 }).data[0]!.id).to.equal('T1190');
  });

  it('refuses bad queries by name: empty, too long, unknown parameter, wrong type, unknown id', () => {
    const code = (f: () => unknown) => {
      try {
        f();
        return null;
      } catch (err) {
        return `${(err as GatewayError).code} ${(err as GatewayError).message}`;
      }
    };
    expect(code(() => readSearchQuery({ q: '' }))).to.match(/^invalid-knowledge-query q:/);
    expect(code(() => readSearchQuery({ q: '   ' }))).to.match(/^invalid-knowledge-query q:/);
    expect(code(() => readSearchQuery({ q: 'x'.repeat(257) }))).to.match(/^invalid-knowledge-query q:/);
    expect(code(() => readSearchQuery({ q: 'a', sort: 'x' }))).to.match(/^invalid-knowledge-query sort:/);
    expect(code(() => readSearchQuery({ q: 'a', limit: '51' }))).to.match(/^invalid-knowledge-query limit:/);
    expect(code(() => readSearchQuery({ q: ['a', 'b'] }))).to.match(/^invalid-knowledge-query q:/);
    expect(code(() => readSearchArgs({ q: 'a', limit: '5' }))).to.match(/^invalid-knowledge-query limit:/);
    expect(readSearchQuery({ q: 'a', limit: '5' })).to.deep.equal({ q: 'a', limit: 5, offset: 0 });
    expect(code(() => graphNode(k.evidence, 'CWE-999999'))).to.match(/^knowledge-not-found/);
  });
});
