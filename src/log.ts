/**
 * Structured logs: one JSON object a line on stderr. Callers pass event names and small fields — rule ids,
 * hashes, codes, versions — never tokens, keys or prompt text (architecture habit 10).
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Logger = Record<Level, (event: string, fields?: Record<string, unknown>) => void>;

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(minimum: Level = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (level: Level) => (event: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < ORDER[minimum]) return;
    write(`${JSON.stringify({ t: new Date().toISOString(), level, event, ...fields })}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** For tests and tools that want silence. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
