import { readdirSync, readFileSync } from 'node:fs';
import { compileGuardrails, loadGuardrailsDoc } from './src/guard/index.ts';
const g = compileGuardrails(loadGuardrailsDoc('rules/guardrails.yaml'));
const fill = (u: string, n = 524288) => u.repeat(Math.ceil(n / u.length)).slice(0, n);
const dir = 'test/fixtures/guard/clean/';
const text = fill(readdirSync(dir).sort().map((f) => readFileSync(dir + f, 'utf8')).join('\n') + '\n');
const messages: any[] = [];
for (let i = 0; i < text.length; i += 8192) messages.push({ role: i % 16384 ? 'assistant' : 'user', content: text.slice(i, i + 8192) });
for (let i = 0; i < 10; i++) g.redact({ messages });
