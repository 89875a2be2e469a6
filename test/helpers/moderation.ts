/**
 * A small OpenAI-compatible moderation server for tests (`POST /v1/moderations`), in-process on a free
 * loopback port. It records what it receives and answers as told: by default it marks, for each input,
 * every category whose trigger word the input contains (`categories[c] = true`, score 0.99) and scores
 * the rest 0.01, with `scores` giving exact scores per trigger word; or it fails (an error status, a delay,
 * a malformed body, a dropped connection).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModerationBehaviour {
  mode: 'answer' | 'status' | 'slow' | 'malformed' | 'drop' | 'short';
  status?: number;
  delayMs?: number;
}

export interface ModerationServer {
  url: string;
  requests: Array<{ headers: Record<string, string | string[] | undefined>; body: { input: string[]; model?: string } }>;
  behave(b: ModerationBehaviour): void;
  /** Trigger word -> category marked true for an input containing it. */
  triggers: Map<string, string>;
  /** Trigger word -> [category, score]: the score, without the endpoint's own verdict. */
  scores: Map<string, [string, number]>;
  reset(): void;
  close(): Promise<void>;
}

const CATEGORIES = ['harassment', 'illicit', 'illicit/violent', 'self-harm', 'sexual', 'sexual/minors', 'violence'];

export async function startModerationServer(): Promise<ModerationServer> {
  let behaviour: ModerationBehaviour = { mode: 'answer' };
  const requests: ModerationServer['requests'] = [];
  const triggers = new Map<string, string>();
  const scores = new Map<string, [string, number]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { input: string[]; model?: string };
      requests.push({ headers: req.headers, body });
      const answer = () => {
        if (behaviour.mode === 'drop') return req.socket.destroy();
        if (behaviour.mode === 'status')
          return res.writeHead(behaviour.status ?? 500, { 'content-type': 'application/json' }).end('{"error":{"message":"down"}}');
        if (behaviour.mode === 'malformed') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"results": "nope"');
        const inputs = Array.isArray(body.input) ? body.input : [String(body.input)];
        const results = inputs.map((text) => {
          const categories: Record<string, boolean> = Object.fromEntries(CATEGORIES.map((c) => [c, false]));
          const category_scores: Record<string, number> = Object.fromEntries(CATEGORIES.map((c) => [c, 0.01]));
          for (const [word, c] of triggers) if (text.includes(word)) [categories[c], category_scores[c]] = [true, 0.99];
          for (const [word, [c, s]] of scores) if (text.includes(word)) category_scores[c] = s;
          return { flagged: Object.values(categories).some(Boolean), categories, category_scores };
        });
        const out = behaviour.mode === 'short' ? results.slice(1) : results;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'modr-test', model: body.model ?? 'test', results: out }));
      };
      if (behaviour.mode === 'slow') setTimeout(answer, behaviour.delayMs ?? 2000);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/moderations`,
    requests,
    triggers,
    scores,
    behave(b) {
      behaviour = b;
    },
    reset() {
      behaviour = { mode: 'answer' };
      requests.length = 0;
      triggers.clear();
      scores.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
