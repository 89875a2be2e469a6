/**
 * Structured logs: one JSON object a line on stderr, written by pino — `{"level","t","event",...fields}`.
 * Callers pass event names and small fields — rule ids, hashes, codes, versions — never tokens, keys or
 * prompt text. As a second line of defence, fields whose names say they hold a
 * credential are censored by pino's redaction whatever a caller passes.
 *
 * The level comes from `LOG_LEVEL` (debug, info, warn, error; main.ts). Every request is one info line
 * (src/http/request-context.ts), so `warn` is the level for a quiet production log.
 */
import { pino } from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Logger = Record<Level, (event: string, fields?: Record<string, unknown>) => void>;

const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

export function isLevel(v: unknown): v is Level {
  return typeof v === 'string' && (LEVELS as readonly string[]).includes(v);
}

/** Field names that hold credentials, at the top level or one level down. */
const SECRET_FIELDS = ['authorization', 'cookie', 'token', 'apiKey', 'password', 'secret', 'pat', 'sessionId'];

export function createLogger(minimum: Level = 'info', write?: (line: string) => void): Logger {
  const destination = write ? { write } : pino.destination({ fd: 2, sync: true });
  const p = pino(
    {
      level: minimum,
      base: null,
      messageKey: 'event',
      timestamp: () => `,"t":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)], censor: '[redacted]' },
    },
    destination,
  );
  const emit = (level: Level) => (event: string, fields?: Record<string, unknown>) => p[level](fields ?? {}, event);
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** For tests and tools that want silence. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
