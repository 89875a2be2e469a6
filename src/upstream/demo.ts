/**
 * The bundled demo upstream: a tiny OpenAI-compatible responder so `npm start` works end to end without a
 * provider key. It is not a model, and says so in every answer. It echoes the requested model id (so the
 * strict echo check passes for whatever id the route sends), reports token usage estimated from lengths,
 * and, when the request offers tools and the last turn is the user's, answers with a call to the first
 * tool (or the one `tool_choice` names) so tool round trips can be tried too. It never repeats prompt text.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface DemoRequest {
  model?: string;
  messages?: Array<{ role: string; content?: string | null }>;
  tools?: Array<{ function?: { name?: string } }>;
  tool_choice?: unknown;
}

const estimate = (chars: number) => Math.max(1, Math.ceil(chars / 4));

export function demoAnswer(req: DemoRequest, n: number): Record<string, unknown> {
  const messages = req.messages ?? [];
  const last = messages[messages.length - 1];
  const inputChars = messages.reduce((sum, m) => sum + (m.content?.length ?? 0), 0);
  const named = (req.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
  const toolName = named ?? req.tools?.[0]?.function?.name;
  const wantsTool = toolName !== undefined && req.tool_choice !== 'none' && last?.role === 'user';
  const content = wantsTool
    ? null
    : `[portcullis demo upstream] This is a demo responder, not a model. It read ${messages.length} message(s), ` +
      `${inputChars} characters, for model ${req.model ?? '(none)'}. Point a route at a real upstream in config/gateway.yaml.`;
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (wantsTool) message['tool_calls'] = [{ id: `call_demo_${n}`, type: 'function', function: { name: toolName, arguments: '{}' } }];
  const completion = estimate(content?.length ?? 16);
  const prompt = estimate(inputChars);
  return {
    id: `chatcmpl-demo-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: req.model ?? 'demo',
    choices: [{ index: 0, message, logprobs: null, finish_reason: wantsTool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

export interface DemoUpstream {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startDemoUpstream(host = '127.0.0.1', port = 0): Promise<DemoUpstream> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":{"code":"not-found","message":"demo upstream serves POST /v1/chat/completions"}}');
        return;
      }
      let body: DemoRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DemoRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"invalid-json","message":"demo upstream needs JSON"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(demoAnswer(body, ++n)));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${bound}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
