/**
 * What a receipt costs a call in gateway CPU, before and after the receipt log, on a receipt of
 * the shape a small chat call writes. A focused micro-benchmark (the full `npm run bench` needs the machine
 * to itself):
 *
 *   before  the previous per-receipt signature: the JSON copy, the RFC 8785 form, an Ed25519 signature,
 *           then the JSON the store writes
 *   after   the log's leaf: its RFC 8785 form, which is also what the store writes, and one SHA-256
 *           (receipts/redis-receipts.ts receiptKeys); Redis adds an INCR and a 64-byte SETRANGE to the same script
 *   signer  what the lease holder spends per leaf when it integrates (about one SHA-256 per leaf for the
 *           subtrees it closes) and per checkpoint (one signature, at most once per checkpointEveryMs)
 *
 *   npx tsx bench/receipt-cost.ts
 *
 * Figures are CPU microseconds (user + system, process.cpuUsage) per receipt, median of 7 rounds after a
 * warm-up; a shared machine moves them by a few per cent.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import canonicalize from 'canonicalize';
import { receiptLeafHash, storableReceipt } from '../src/receipts/canonical.js';
import { Frontier, leafHash } from '../src/receipts/merkle.js';
import { signCheckpoint } from '../src/receipts/note.js';

const { privateKey } = generateKeyPairSync('ed25519');

function receipt(i: number): Record<string, unknown> {
  return {
    id: `rcpt_3f1c2a9e-8d4b-4c1a-9b7e-${String(i).padStart(12, '0')}`,
    callId: `3f1c2a9e-8d4b-4c1a-9b7e-${String(i).padStart(12, '0')}`,
    principalId: 'did:web:portcullis.localhost:tenant:t12345-abc',
    createdAt: '2026-11-23T18:41:29.123Z',
    finishedAt: '2026-11-23T18:41:29.456Z',
    outcome: 'answered',
    model: 'shared-general-a',
    route: 'shared',
    team: 'blue',
    task: 'code-review',
    scope: null,
    band: 'code-review',
    decision: {
      allow: true,
      codes: [],
      versions: { guardrails: '2026.11.21', firewall: '2026.11.21', compliance: '2026.11.21', rules: '2026.11.21', policy: '2026.11.21+a1b2c3d4' },
    },
    guardrails: { block: [], redact: ['secret-hygiene'], flag: [] },
    upstream: { model: 'shared-general-a', echoedModel: 'shared-general-a' },
    day: '2026-11-23',
    usage: { prompt_tokens: 10, completion_tokens: 90, total_tokens: 100, cached_tokens: 0 },
    billing: 'paid',
    chargedMicroUSD: 414,
    pricedMicroUSD: 414,
    reservedMicroUSD: 414,
    reservedTokens: 100,
    countedTokens: 100,
    rates: { inputPerMTok: 900000, cachedInputPerMTok: 225000, outputPerMTok: 4500000 },
  };
}

/** The previous release's path: copy, canonical form, Ed25519, then the stored JSON. */
function before(r: Record<string, unknown>): string {
  const plain = JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
  const value = sign(null, Buffer.from(canonicalize(plain)!, 'utf8'), privateKey).toString('base64url');
  return JSON.stringify({ ...plain, signature: { alg: 'Ed25519', keyId: '0123456789abcdef', value } });
}

/** This release's path (receipts/redis-receipts.ts receiptKeys): the canonical form, stored as it is, and its leaf hash. */
function after(r: Record<string, unknown>): string {
  const { json, leaf } = storableReceipt(r);
  return json + leaf.toString('hex');
}

function cpuPerOp(n: number, op: (i: number) => unknown): number {
  let sink = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < n; i += 1) sink += String(op(i)).length;
  const used = process.cpuUsage(start);
  if (sink < 0) throw new Error('unreachable');
  return (used.user + used.system) / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const receipts = Array.from({ length: 2000 }, (_, i) => receipt(i));
const measure = (op: (i: number) => unknown) => {
  cpuPerOp(2000, op); // warm-up
  return median(Array.from({ length: 7 }, () => cpuPerOp(2000, op)));
};

const b = measure((i) => before(receipts[i]!));
const a = measure((i) => after(receipts[i]!));
const signOnly = measure((i) => sign(null, Buffer.from(`receipt ${i}`), privateKey));
const hashOnly = measure((i) => leafHash(Buffer.from(canonicalize(receipts[i])!, 'utf8')));
// The signer: integrate 2000 leaves into a tree of 1,000,000 (the subtrees they close), per leaf.
const leaves = receipts.map((r) => receiptLeafHash(r));
const integrate =
  measure(() => {
    const t = new Frontier(0, []);
    for (const l of leaves) t.append(l);
    return t.root();
  }) / 2000;
const checkpoint = measure(() => signCheckpoint({ origin: 'portcullis.localhost/receipts', size: 123456, root: leaves[0]! }, privateKey));

const f = (us: number) => us.toFixed(1).padStart(7);
process.stdout.write(`receipt cost per call, CPU µs (median of 7 × 2000, Node ${process.version})
  before (copy + RFC 8785 + Ed25519 sign + stored JSON) ${f(b)}
  after  (RFC 8785, stored as it is, + SHA-256)          ${f(a)}   (${(b / a).toFixed(1)}× less)
    of which: Ed25519 sign alone ${f(signOnly)}, RFC 8785 + leaf SHA-256 ${f(hashOnly)}
  signer, per leaf integrated (lease holder only)        ${f(integrate)}
  signer, per checkpoint (at most 1 per checkpointEveryMs) ${f(checkpoint)}
`);
