/**
 * The log's second line of defence: a field whose name says it holds a credential is written as
 * "[redacted]", at the top level or one level down, whatever a caller passes. The logger censors such
 * fields itself (src/log.ts `censored`); pino's own `redact`, configured with the same paths, is the
 * reference: every line must come out exactly as pino would have written it, and the caller's objects
 * must be left as they were.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { createLogger, SECRET_FIELDS } from '../../src/log.js';

/** The logger as it was configured before: pino's redaction over the same paths. */
function referenceLogger(write: (line: string) => void) {
  const p = pino(
    {
      level: 'debug',
      base: null,
      messageKey: 'event',
      timestamp: false,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)], censor: '[redacted]' },
    },
    { write },
  );
  return (event: string, fields: Record<string, unknown>) => p.info(fields, event);
}

const CASES: Array<Record<string, unknown>> = [
  { listener: 'api', method: 'POST', route: '/v1/chat/completions', status: 200, durationMs: 3.2, requestId: 'r-1', principal: '0123456789abcdef' },
  {},
  { token: 'pat_live_secret', callId: 'c1' },
  { authorization: 'Bearer abc', cookie: 'sid=1', apiKey: 'k', password: 'p', secret: 's', pat: 'x', sessionId: 'y' },
  { headers: { authorization: 'Bearer abc', accept: 'json' }, status: 401 },
  { deep: { inner: { token: 'two levels down is not censored' } }, upstream: { apiKey: 'sk-1', route: 'shared' } },
  { token: { nested: 'an object under a credential name' }, list: ['token', 'cookie'], n: null, flag: false },
  { sessionId: undefined, other: undefined, obj: { pat: undefined } },
  { rules: ['secret-hygiene'], where: 'messages[0].content', Token: 'case differs: not a credential name' },
];

describe('log lines censor credential fields as pino redaction did', () => {
  for (const fields of CASES) {
    it(`writes ${JSON.stringify(Object.keys(fields))} as the reference does, and leaves the caller's object alone`, () => {
      const before = structuredClone(fields);
      const ours: string[] = [];
      const theirs: string[] = [];
      createLogger('debug', (l) => void ours.push(l)).info('an.event', fields);
      referenceLogger((l) => void theirs.push(l))('an.event', structuredClone(fields));
      expect(ours).to.have.length(1);
      const line = JSON.parse(ours[0]!) as Record<string, unknown>;
      expect(line['t']).to.be.a('string');
      delete line['t'];
      expect(line).to.deep.equal(JSON.parse(theirs[0]!));
      expect(fields).to.deep.equal(before);
      for (const secret of ['pat_live_secret', 'Bearer abc', 'sk-1', 'sid=1']) expect(ours[0]).to.not.include(secret);
    });
  }
});
