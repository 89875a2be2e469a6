/**
 * `portcullis receipt ...`: a reviewer's offline checks of the receipt log (receipts/verify.ts).
 *
 *   receipt verify <file> [--key pubkey.pem] [--checkpoint file] [--root DIR] [--witness vkey]... [--witnesses-required k]
 *       <file> is a receipt as GET /v1/receipts/{id} answers it. Checks its leaf hash (recomputed from the
 *       receipt), its inclusion proof and the checkpoint's signature; `--checkpoint` checks against a
 *       checkpoint obtained separately instead of the one in the file. A receipt from before the log (signed
 *       on its own) is checked against its signature, as the previous release did.
 *   receipt audit --from <checkpoint file> --to <checkpoint file | latest> [--key pubkey.pem] [--url API]
 *                 [--proof file] [--save file] [--witness vkey]... [--witnesses-required k]
 *       Checks that the log of the second checkpoint extends that of the first (nothing removed or
 *       changed): the consistency proof comes from GET /v1/receipts/log/consistency on the API (--url,
 *       PORTCULLIS_API_URL, default http://127.0.0.1:8080), or from --proof (its JSON, offline). `--to latest`
 *       fetches the current checkpoint, and `--save` keeps it for the next audit.
 *
 * `--witness` (repeatable) names a witness the reader trusts by its C2SP cosignature verifier key (GET
 * /v1/secure lists the log's under receiptLog.witnesses); then the checkpoint checked (verify: the receipt's
 * or --checkpoint; audit: the --to one) must carry valid cosignatures of at least `--witnesses-required`
 * of them (default: all). A checkpoint the witnesses did not cosign is refused, exit 1: it is what a log
 * showing this reader a tree it shows no one else (a split view) hands out.
 *
 * The key is, in order: `--key` (a public key PEM, or the private key PEM), PORTCULLIS_RECEIPT_KEY,
 * PORTCULLIS_RECEIPT_KEY_FILE, `receipts.keyFile` of the configuration under --root, or the key `npm start`
 * keeps in the data folder under --root (.portcullis/data, or PORTCULLIS_DATA_DIR). Exit 0: valid; 1: not valid; 2: usage or
 * unreadable input. Every JSON read (the receipt, a proof file, the API's consistency answer) is parsed
 * with duplicate keys refused (receipts/strict-json.ts): such input is not valid, exit 1.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { loadConfig } from '../config/load.js';
import { dataDir } from '../local-data/index.js';
import { publicKeyFromPem } from '../receipts/key.js';
import { isLegacyReceipt, verifyLegacyReceipt } from '../receipts/legacy.js';
import { verifyConsistencyBundle, verifyReceiptBundle } from '../receipts/verify.js';
import { claimedSize } from '../receipts/note.js';
import { DuplicateKeyError, parseStrictJson } from '../receipts/strict-json.js';
import { parseWitnessKey, requireCosignatures, sameWitnessKey, type WitnessKey } from '../receipts/witness/cosignature.js';

class Usage extends Error {}

function fail(message: string, code = 2): number {
  process.stderr.write(`portcullis: ${message}\n`);
  return code;
}

function keyFor(values: { key?: string | undefined; root?: string | undefined }): KeyObject {
  if (values.key) return publicKeyFromPem(readFileSync(values.key));
  const env = process.env['PORTCULLIS_RECEIPT_KEY'];
  if (env) return publicKeyFromPem(env);
  if (process.env['PORTCULLIS_RECEIPT_KEY_FILE']) return publicKeyFromPem(readFileSync(process.env['PORTCULLIS_RECEIPT_KEY_FILE']));
  const root = resolve(values.root ?? process.env['PORTCULLIS_ROOT'] ?? process.cwd());
  const keyFile = loadConfig(root).gateway.data.receipts?.keyFile;
  // In a clone where `npm start` runs, the key it made and keeps in its data folder (src/local-data).
  const kept = join(dataDir(root, process.env), 'receipt-key.pem');
  if (!keyFile && existsSync(kept)) return publicKeyFromPem(readFileSync(kept));
  if (!keyFile) throw new Usage('no key: pass --key <public key PEM> (GET /v1/secure receiptLog.publicKeyPem, or `portcullis admin receipt-key`)');
  return publicKeyFromPem(readFileSync(isAbsolute(keyFile) ? keyFile : join(root, keyFile)));
}

interface WitnessOptions {
  witness?: string[] | undefined;
  'witnesses-required'?: string | undefined;
}

/** The witnesses the reader requires, and how many of them: null when none is given. */
function witnessesFor(values: WitnessOptions): { keys: WitnessKey[]; required: number } | null {
  const given = values.witness ?? [];
  const k = values['witnesses-required'];
  if (given.length === 0) {
    if (k !== undefined) throw new Usage('--witnesses-required needs at least one --witness <verifier key>');
    return null;
  }
  let keys: WitnessKey[];
  try {
    keys = given.map(parseWitnessKey);
  } catch (err) {
    throw new Usage(`--witness: ${(err as Error).message}`);
  }
  if (new Set(keys.map((w) => w.name)).size !== keys.length) throw new Usage('--witness: the same witness is given twice');
  // A cosignature does not sign the witness's name: one key under two names would count one witness twice.
  keys.forEach((w, i) => {
    const twin = keys.slice(0, i).find((o) => sameWitnessKey(o, w));
    if (twin)
      throw new Usage(
        `--witness: "${twin.name}" and "${w.name}" are the same key under two names: one witness, which cannot count twice toward --witnesses-required`,
      );
  });
  const required = k === undefined ? keys.length : Number(k);
  if (!/^[1-9][0-9]*$/.test(k ?? '1') || required > keys.length) {
    throw new Usage(`--witnesses-required must be a whole number from 1 to the number of --witness keys (${keys.length})`);
  }
  return { keys, required };
}

/** "; cosigned by 2 of 3 witnesses (a, b)" for a checkpoint that passed, or the reason it did not. */
function witnessed(note: string, w: { keys: WitnessKey[]; required: number }): { ok: true; text: string } | { ok: false; reason: string } {
  const r = requireCosignatures(note, w.keys, w.required);
  if (!r.ok) return r;
  const names = r.count.cosigned.map((c) => c.name).join(', ');
  return { ok: true, text: `; cosigned by ${r.count.cosigned.length} of ${w.keys.length} witnesses (${names}), ${w.required} required` };
}

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Usage(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

function apiUrl(url: string | undefined): string {
  return (url ?? process.env['PORTCULLIS_API_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
}

async function get(url: string): Promise<Response> {
  try {
    return await fetch(url);
  } catch {
    throw new Usage(`cannot reach ${url} (is the gateway running? pass --url)`);
  }
}

function verify(
  positionals: string[],
  values: { key?: string | undefined; root?: string | undefined; checkpoint?: string | undefined } & WitnessOptions,
): number {
  const file = positionals[1];
  if (!file) throw new Usage('usage: portcullis receipt verify <file> [--key pubkey.pem] [--checkpoint file] [--witness vkey]... [--witnesses-required k]');
  const witnesses = witnessesFor(values);
  let receipt: Record<string, unknown>;
  try {
    receipt = parseStrictJson(read(file, 'the receipt')) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof Usage) throw err;
    if (err instanceof DuplicateKeyError) return fail(`NOT valid: ${file}: ${err.message}`, 1);
    throw new Usage(`cannot read a receipt from ${file}: ${(err as Error).message}`);
  }
  const key = keyFor(values);
  const id = String(receipt?.['id']);
  if (receipt && typeof receipt === 'object' && isLegacyReceipt(receipt)) {
    const legacy = verifyLegacyReceipt(receipt, key);
    if (!legacy.ok) return fail(`NOT valid: receipt ${id}: ${legacy.reason}`, 1);
    if (witnesses) return fail(`NOT valid: receipt ${id} is from before the log: no checkpoint covers it for witnesses to cosign`, 1);
    process.stdout.write(`valid: receipt ${id} (from before the log) is signed by key ${legacy.keyId}\n`);
    return 0;
  }
  const note = values.checkpoint ? read(values.checkpoint, 'the checkpoint') : undefined;
  const result = verifyReceiptBundle(receipt, key, note);
  if (!result.ok) return fail(`NOT valid: receipt ${id}: ${result.reason}`, 1);
  const cp = result.checkpoint;
  let cosigned = '';
  if (witnesses) {
    const w = witnessed(note ?? String(receipt['checkpoint']), witnesses);
    if (!w.ok) return fail(`NOT valid: receipt ${id}: ${w.reason}`, 1);
    cosigned = w.text;
  }
  process.stdout.write(
    `valid: receipt ${id} is leaf ${result.logIndex} of log ${cp.origin}, in its signed checkpoint of size ${cp.size} (root ${cp.root.toString('base64')})${cosigned}\n`,
  );
  return 0;
}

type AuditOptions = { [k in 'key' | 'root' | 'from' | 'to' | 'url' | 'proof' | 'save']?: string | undefined } & WitnessOptions;

async function audit(values: AuditOptions): Promise<number> {
  if (!values['from'] || !values['to'])
    throw new Usage(
      'usage: portcullis receipt audit --from <checkpoint file> --to <checkpoint file | latest> [--key pubkey.pem] [--url API] [--proof file] [--witness vkey]... [--witnesses-required k]',
    );
  const witnesses = witnessesFor(values);
  const key = keyFor(values);
  const fromNote = read(values['from'], 'the checkpoint');
  let toNote: string;
  if (values['to'] === 'latest') {
    const res = await get(`${apiUrl(values['url'])}/v1/receipts/log/checkpoint`);
    if (!res.ok) throw new Usage(`GET /v1/receipts/log/checkpoint answered ${res.status}`);
    toNote = await res.text();
  } else {
    toNote = read(values['to'], 'the checkpoint');
  }
  const [from, to] = [claimedSize(fromNote), claimedSize(toNote)];
  if (from === null || to === null) return fail('NOT valid: a checkpoint is not a tlog checkpoint (origin, size, root)', 1);
  let proof: unknown;
  if (values['proof']) {
    try {
      proof = (parseStrictJson(read(values['proof'], 'the proof')) as { proof?: unknown }).proof;
    } catch (err) {
      if (err instanceof Usage) throw err;
      if (err instanceof DuplicateKeyError) return fail(`NOT valid: ${values['proof']}: ${err.message}`, 1);
      throw new Usage(`cannot read a proof from ${values['proof']}: ${(err as Error).message}`);
    }
  } else if (from === 0 || from === to) {
    proof = []; // nothing to ask: the empty tree is a prefix of every tree, and a tree of itself
  } else {
    const res = await get(`${apiUrl(values['url'])}/v1/receipts/log/consistency?from=${Math.min(from, to)}&to=${Math.max(from, to)}`);
    const text = await res.text().catch(() => '');
    let body: { proof?: unknown; error?: { code?: string; message?: string } };
    try {
      body = parseStrictJson(text) as typeof body;
    } catch (err) {
      if (err instanceof DuplicateKeyError) return fail(`NOT valid: the consistency answer: ${err.message}`, 1);
      body = {};
    }
    if (!res.ok) throw new Usage(`GET /v1/receipts/log/consistency answered ${res.status}: ${body.error?.message ?? ''}`);
    proof = body.proof;
  }
  const result = verifyConsistencyBundle(fromNote, toNote, proof, key);
  if (!result.ok) return fail(`NOT valid: ${result.reason}`, 1);
  let cosigned = '';
  if (witnesses) {
    const w = witnessed(toNote, witnesses);
    if (!w.ok) return fail(`NOT valid: the checkpoint of size ${result.to.size}: ${w.reason}`, 1);
    cosigned = w.text;
  }
  if (values['save']) writeFileSync(values['save'], toNote);
  const r = result;
  process.stdout.write(
    `consistent: log ${r.to.origin} at size ${r.to.size} (root ${r.to.root.toString('base64')}) extends its checkpoint of size ${r.from.size} (root ${r.from.root.toString('base64')})${cosigned}\n`,
  );
  return 0;
}

export async function receiptCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      root: { type: 'string' },
      checkpoint: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      url: { type: 'string' },
      proof: { type: 'string' },
      save: { type: 'string' },
      witness: { type: 'string', multiple: true },
      'witnesses-required': { type: 'string' },
    },
  });
  try {
    if (positionals[0] === 'verify') return verify(positionals, values);
    if (positionals[0] === 'audit') return await audit(values);
    return fail('usage: portcullis receipt verify <file> [--key pubkey.pem] [--checkpoint file] | portcullis receipt audit --from <file> --to <file|latest>');
  } catch (err) {
    if (err instanceof Usage) return fail(err.message);
    if (err instanceof Error && /key|PEM|DECODER|asn1/i.test(err.message)) return fail(`cannot read the key: ${err.message}`);
    throw err;
  }
}
