/**
 * Where the data key comes from, read at start like the receipt key: `PORTCULLIS_DATA_KEY` (a keyring, see
 * keyring.ts), else the file `PORTCULLIS_DATA_KEY_FILE` names (a mounted secret, or the one `npm start` keeps
 * in its data folder: src/local-data). With neither, a key is generated for this process and a warning
 * logged: what it seals opens only in this process, which is right for the memory store and wrong for a
 * shared Redis.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { ConfigError } from '../config/documents.js';
import { DataKeyError, newDataKey, parseKeyring, type DataKeyring } from './keyring.js';

export function loadDataKeyring(opts: { env: Record<string, string | undefined>; log: Logger }): DataKeyring {
  const inline = opts.env['PORTCULLIS_DATA_KEY'];
  const file = opts.env['PORTCULLIS_DATA_KEY_FILE'];
  // A malformed or unreadable key is a configuration error like any other: one line naming what is wrong
  // (never the key), exit 78 at start, not a stack trace.
  try {
    if (inline) return parseKeyring(inline);
    if (file) return parseKeyring(readFileSync(file, 'utf8'), file);
  } catch (err) {
    if (err instanceof DataKeyError) throw new ConfigError([err.message]);
    throw new ConfigError([`PORTCULLIS_DATA_KEY_FILE: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}: ${file}`]);
  }
  const ring = parseKeyring(newDataKey(), 'generated', true);
  opts.log.warn('data-key.ephemeral', {
    keyId: ring.currentId,
    note: 'no data key configured (PORTCULLIS_DATA_KEY or PORTCULLIS_DATA_KEY_FILE): secrets sealed now open only in this process',
  });
  return ring;
}
