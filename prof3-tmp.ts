import { compileGuardrails, loadGuardrailsDoc } from './src/guard/index.ts';
const g = compileGuardrails(loadGuardrailsDoc('rules/guardrails.yaml'));
const fill = (u: string, n = 524288) => u.repeat(Math.ceil(n / u.length)).slice(0, n);
const which = process.argv[2];
const text = which === 'cyr' ? fill('АКІА ѕк-рrој ') : fill('s a r i n ');
for (let i = 0; i < 6; i++) g.redact({ messages: [{ role: 'user', content: text }] });
