/**
 * `portcullis receipt verify <file> [--key pubkey.pem] [--root DIR]`: checks one receipt (the JSON that
 * GET /v1/receipts/{id} answers) offline against the gateway's public key. The key is, in order: `--key`
 * (a public key PEM, or the private key PEM), PORTCULLIS_RECEIPT_KEY, or `receipts.keyFile` of the
 * configuration under --root (default PORTCULLIS_ROOT or the working directory). Exit 0: valid; 1: not valid;
 * 2: usage or unreadable input.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { loadConfig } from '../config/load.js';
import { publicKeyFromPem, verifyReceipt } from '../receipts/signing.js';

function fail(message: string, code = 2): number {
  process.stderr.write(`portcullis: ${message}\n`);
  return code;
}

function keyFor(values: { key?: string | undefined; root?: string | undefined }): KeyObject | string {
  if (values.key) return publicKeyFromPem(readFileSync(values.key));
  const env = process.env['PORTCULLIS_RECEIPT_KEY'];
  if (env) return publicKeyFromPem(env);
  const root = resolve(values.root ?? process.env['PORTCULLIS_ROOT'] ?? process.cwd());
  const keyFile = loadConfig(root).gateway.data.receipts?.keyFile;
  if (!keyFile) return 'no key: pass --key <public key PEM> (GET /admin/receipt-key, or `portcullis admin receipt-key`)';
  return publicKeyFromPem(readFileSync(isAbsolute(keyFile) ? keyFile : join(root, keyFile)));
}

export async function receiptCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { key: { type: 'string' }, root: { type: 'string' } } });
  if (positionals[0] !== 'verify' || !positionals[1]) return fail('usage: portcullis receipt verify <file> [--key pubkey.pem]');
  let receipt: unknown;
  try {
    receipt = JSON.parse(readFileSync(positionals[1], 'utf8'));
  } catch (err) {
    return fail(`cannot read a receipt from ${positionals[1]}: ${(err as Error).message}`);
  }
  let key: KeyObject | string;
  try {
    key = keyFor(values);
  } catch (err) {
    return fail(`cannot read the key: ${(err as Error).message}`);
  }
  if (typeof key === 'string') return fail(key);
  const result = verifyReceipt(receipt, key);
  const id = (receipt as { id?: unknown })?.id;
  if (!result.ok) return fail(`NOT valid: receipt ${String(id)}: ${result.reason}`, 1);
  process.stdout.write(`valid: receipt ${String(id)} is signed by key ${result.keyId}\n`);
  return 0;
}
