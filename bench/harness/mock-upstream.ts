/**
 * The bench's instant upstream: an OpenAI-compatible chat-completions responder on node:http, run as its
 * own process so every row of the bench forwards to the same thing. It answers as soon as the request body
 * has arrived, with a small fixed answer that echoes the requested `model` (portcullis' strict echo check
 * needs it) — a JSON chat.completion, or for `"stream":true` an SSE stream of the same shape portcullis
 * emulates (one content chunk, one finish chunk with usage, `[DONE]`).
 *
 * It never parses JSON: `model` and `stream` are found with Buffer.indexOf, so a 100 KB body costs the
 * harness a memchr, not a parse, and the harness ceiling (row R0) stays high. A quote inside a JSON string
 * is escaped, so `"model":"` can only match the top-level key. Prints `listening <port>` once ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const MODEL_KEY = Buffer.from('"model":"');
const STREAM_TRUE = Buffer.from('"stream":true');
const CONTENT = 'The function copies argv[1] into a fixed buffer without a bound: use strncpy or check the length.';
const USAGE = { prompt_tokens: 41, completion_tokens: 23, total_tokens: 64, prompt_tokens_details: { cached_tokens: 0 } };

let n = 0;

function modelOf(body: Buffer): string {
  const at = body.indexOf(MODEL_KEY);
  if (at < 0) return 'unknown-model';
  const start = at + MODEL_KEY.length;
  const end = body.indexOf(0x22, start);
  return end < 0 ? 'unknown-model' : body.toString('utf8', start, end);
}

function completion(model: string): string {
  n++;
  return JSON.stringify({
    id: `chatcmpl-mock-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: CONTENT }, logprobs: null, finish_reason: 'stop' }],
    usage: USAGE,
  });
}

function stream(model: string): string {
  n++;
  const base = { id: `chatcmpl-mock-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const content = { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: CONTENT }, logprobs: null, finish_reason: null }] };
  const finish = { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: USAGE };
  return `data: ${JSON.stringify(content)}\n\ndata: ${JSON.stringify(finish)}\n\ndata: [DONE]\n\n`;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const model = modelOf(body);
    if (body.indexOf(STREAM_TRUE) >= 0) {
      const text = stream(model);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } else {
      const text = completion(model);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    }
  });
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
