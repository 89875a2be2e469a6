/**
 * Structured logs: one JSON object a line on stderr, written by pino — `{"level","t","event",...fields}`.
 * Callers pass event names and small fields — rule ids, hashes, codes, versions — never tokens, keys or
 * prompt text. As a second line of defence, fields whose names say they hold a credential are censored
 * whatever a caller passes, at the top level or one level down — as pino's `redact` would, but by
 * `censored` below: pino's redaction copied every line's fields whole, three times the cost of the rest of
 * the line (every request writes one), where a line without such a field needs no copy at all.
 *
 * The level comes from `LOG_LEVEL` (debug, info, warn, error; main.ts). Every request is one info line
 * (src/http/request-context.ts), so `warn` is the level for a quiet production log.
 */
import { pino } from 'pino';
import { isoNow } from './iso-time.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Logger = Record<Level, (event: string, fields?: Record<string, unknown>) => void>;

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

export function isLevel(v: unknown): v is Level {
  return typeof v === 'string' && (LEVELS as readonly string[]).includes(v);
}

/** Field names that hold credentials, at the top level or one level down. */
export const SECRET_FIELDS = ['authorization', 'cookie', 'token', 'apiKey', 'password', 'secret', 'pat', 'sessionId'] as const;
const SECRET: ReadonlySet<string> = new Set(SECRET_FIELDS);
const CENSOR = '[redacted]';
const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** An object one level down, whose own credential-named fields are censored (a copy, only when it has one). */
function censoredInner(v: Record<string, unknown>): Record<string, unknown> {
  let out = v;
  for (const k in v) {
    if (!own(v, k) || !SECRET.has(k)) continue;
    if (out === v) out = { ...v };
    out[k] = CENSOR;
  }
  return out;
}

/**
 * The fields with every credential-named field, at the top level or one level down (`*.token`), replaced
 * by "[redacted]"; the caller's objects are never changed: what needs censoring is copied, the rest is the
 * caller's own (no copy for the usual line).
 */
export function censored(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const k in fields) {
    if (!own(fields, k)) continue;
    const v = fields[k];
    let value: unknown;
    // A top-level field left undefined is left out of the line, as pino leaves it (one level down, pino
    // writes the censor even over undefined, and so does censoredInner).
    if (SECRET.has(k)) {
      if (v === undefined) continue;
      value = CENSOR;
    } else {
      if (v === null || typeof v !== 'object') continue;
      value = censoredInner(v as Record<string, unknown>);
      if (value === v) continue;
    }
    if (out === fields) out = { ...fields };
    out[k] = value;
  }
  return out;
}

export function createLogger(minimum: Level = 'info', write?: (line: string) => void): Logger {
  const destination = write ? { write } : pino.destination({ fd: 2, sync: true });
  const p = pino(
    {
      level: minimum,
      base: null,
      messageKey: 'event',
      timestamp: () => `,"t":"${isoNow()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const emit = (level: Level) => (event: string, fields?: Record<string, unknown>) => p[level](fields ? censored(fields) : {}, event);
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** For tests and tools that want silence. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
