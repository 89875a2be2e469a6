/**
 * Where the data key comes from, read at start like the receipt key: `PORTCULLIS_DATA_KEY` (a keyring, see
 * keyring.ts), else the file `PORTCULLIS_DATA_KEY_FILE` names (a mounted secret). With neither, a gateway
 * given a place to keep one (`generateAt`: the embedded default's data folder) makes one there once, readable
 * by its owner only, and says so; otherwise a key is generated for this process and a warning logged: what it
 * seals opens only in this process, which is right for the memory store and wrong for a shared Redis.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../log.js';
import { newDataKey, parseKeyring, type DataKeyring } from './keyring.js';

export function loadDataKeyring(opts: { env: Record<string, string | undefined>; log: Logger; generateAt?: string }): DataKeyring {
  const inline = opts.env['PORTCULLIS_DATA_KEY'];
  if (inline) return parseKeyring(inline);
  const file = opts.env['PORTCULLIS_DATA_KEY_FILE'] ?? opts.generateAt;
  if (file) {
    if (!existsSync(file) && file === opts.generateAt) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${newDataKey()}\n`, { mode: 0o600, flag: 'wx' });
      opts.log.info('data-key.generated', { file, note: 'a data key was generated to seal secrets at rest; back it up with the data' });
    }
    return parseKeyring(readFileSync(file, 'utf8'), file);
  }
  const ring = parseKeyring(newDataKey(), 'generated', true);
  opts.log.warn('data-key.ephemeral', {
    keyId: ring.currentId,
    note: 'no data key configured (PORTCULLIS_DATA_KEY or PORTCULLIS_DATA_KEY_FILE): secrets sealed now open only in this process',
  });
  return ring;
}
