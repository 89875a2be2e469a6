/**
 * The intent model as an OpenAI-compatible moderation endpoint (`POST /v1/moderations`), in its own
 * process: the shape of the external classifier route (rules/guardrails.yaml `classifiers:`, kind
 * `moderation`), which is how a deployment puts another or a larger judge in front of the gateway. The
 * tests start it as a real process and point the gateway's moderation classifier at it; an operator can
 * run it the same way to keep the encoder's CPU off the gateway's machine.
 *
 *   npx tsx scripts/intent-judge.ts [--port N] [--host 127.0.0.1]   # prints "listening <url>"
 *
 * Categories: cbrn -> `illicit/violent`, csam -> `sexual/minors`, fraud -> `illicit`; a category is
 * flagged when the head's probability that the input is not benign reaches the head's threshold and the
 * class holds the most of it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encoderFiles } from '../src/guard/model/encoder.js';
import { loadIntentHead } from '../src/guard/model/head.js';
import { EncoderPool } from '../src/guard/model/pool.js';
import { modelText } from '../src/guard/model/readings.js';
import { intentWords } from '../src/guard/intent.js';
import { normalise } from '../src/guard/normalise.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const CATEGORY: Record<string, string> = { cbrn: 'illicit/violent', csam: 'sexual/minors', fraud: 'illicit' };
const READING_CHARS = 600;
const THRESHOLD = 0.6;

const head = loadIntentHead('guardrails-intent-head.json');
const files = encoderFiles();
if (head.doc.encoderSha256 !== files.sha256) throw new Error('the head was trained on other encoder weights');
const pool = new EncoderPool(files, { workers: 2, queue: 64, timeoutMs: 30_000 });

const server = createServer((req, res) => {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'POST' || req.url !== '/v1/moderations') return send(404, { error: { message: 'not found' } });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let input: string[];
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: unknown };
      input = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
      if (!Array.isArray(input) || input.some((t) => typeof t !== 'string')) throw new Error('input');
    } catch {
      return send(400, { error: { message: 'input must be a string or an array of strings' } });
    }
    const readings = input.map((t) => modelText(t).slice(-READING_CHARS));
    pool.embed(readings.map((r) => (r === '' ? ' ' : r))).then(
      (vectors) => {
        const results = readings.map((r, i) => {
          const words = intentWords(normalise(r).text);
          const x = head.input(vectors[i]!, words);
          const p = head.probabilities(x);
          let best = 1;
          for (let c = 2; c < p.length; c++) if (p[c]! > p[best]!) best = c;
          // A head with a topic gate (head.ts) flags only what the gate lets through, as the gateway does.
          const harmful = 1 - p[0]! >= THRESHOLD && head.gatePasses(p, x, words);
          const categories: Record<string, boolean> = {};
          const scores: Record<string, number> = {};
          head.classes.forEach((cls, c) => {
            const cat = CATEGORY[cls];
            if (!cat) return;
            categories[cat] = harmful && c === best;
            scores[cat] = Math.round(p[c]! * 1e4) / 1e4;
          });
          return { flagged: harmful, categories, category_scores: scores };
        });
        send(200, { id: `modr-${Date.now()}`, model: 'portcullis-intent-e5-small', results });
      },
      () => send(503, { error: { message: 'the encoder could not answer in time' } }),
    );
  });
});

server.listen(Number(arg('port', '0')), arg('host', '127.0.0.1'), () => {
  const a = server.address() as AddressInfo;
  console.log(`listening http://${a.address}:${a.port}/v1/moderations`);
});
const stop = () => server.close(() => void pool.close().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
