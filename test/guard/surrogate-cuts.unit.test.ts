/**
 * A text cut inside a surrogate pair, read the same on every call. A message cut there is a slice of a longer
 * string that ends with a lone high surrogate; on Node 24, `String.prototype.codePointAt` in an optimised
 * function paired that surrogate with the unit after the slice in its parent, so normalise.ts read a
 * character the message does not hold (and mapped it past the message's end) once it had run often enough:
 * a key in mathematical bold split across two messages was masked one way in a fresh process and another
 * after some traffic, and the two engines disagreed. Each case below runs often enough for the optimising
 * compilers to take the functions, so it fails without the fix whatever ran before it in the process.
 */
import { expect } from 'chai';
import { compiledScanner, RETAINED_MEMORY } from '../../src/guard/compiled.js';
import { compileGuardrails, loadGuardrailsDoc, normalise, type ChatLike } from '../../src/guard/index.js';
import { codePointAt } from '../../src/guard/normalise.js';
import { RULES_DIR } from './helpers/guardrails.js';
import { secretSamples } from './helpers/secrets.js';

const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
const reference = compileGuardrails(doc, { engine: 'typescript' });
const compiled = compileGuardrails(doc);

/** Mathematical bold letters and digits: every one a surrogate pair. */
const bold = (s: string) =>
  s.replace(/[A-Za-z0-9]/g, (c) => {
    const u = c.charCodeAt(0);
    if (u >= 0x61) return String.fromCodePoint(0x1d41a + u - 0x61);
    if (u >= 0x41) return String.fromCodePoint(0x1d400 + u - 0x41);
    return String.fromCodePoint(0x1d7ce + u - 0x30);
  });

const key = bold(secretSamples().find((s) => s.kind === 'openai-key')!.value);
/** A cut between the two units of a pair, near the middle. */
let at = Math.floor(key.length / 2);
while (!/[\ud800-\udbff]/.test(key[at - 1]!)) at++;
const split = (): ChatLike => ({
  messages: [
    { role: 'user', content: key.slice(0, at) },
    { role: 'assistant', content: key.slice(at) },
  ],
});
// Often enough for V8 to optimise the scan's functions (they tier up after a few hundred calls).
const CALLS = 3000;

/** `redact` of the split key by both engines, `CALLS` times: one result, the same from both, every time. */
function sameEveryCall(label: string): void {
  const first = reference.redact(split());
  for (let k = 0; k < CALLS; k++) {
    const req = split();
    const a = reference.redact(req);
    const b = compiled.redact(req);
    if (k % 500 === 0 || JSON.stringify(a) !== JSON.stringify(first) || JSON.stringify(b) !== JSON.stringify(first)) {
      expect(a, `reference, call ${k}: ${label}`).to.deep.equal(first);
      expect(b, `compiled, call ${k}: ${label}`).to.deep.equal(first);
    }
  }
}

describe('guard: a text cut inside a surrogate pair reads the same on every call', function () {
  this.timeout(120_000);

  it('codePointAt reads a pair whole and a lone surrogate as it is, at a sliced text end too', () => {
    const whole = 'x'.repeat(20) + '\u{1d42c}' + 'y'.repeat(20);
    for (let k = 0; k < 20_000; k++) {
      const head = whole.slice(0, 21);
      expect(codePointAt(head, 20)).to.equal(0xd835);
      expect(codePointAt(whole, 20)).to.equal(0x1d42c);
      expect(codePointAt(whole.slice(21), 0)).to.equal(0xdc2c);
    }
  });

  it('normalise: the half before the cut ends with its lone surrogate removed, mapped inside the text, on every call', () => {
    const expected = normalise(key.slice(0, at - 1)).text;
    for (let k = 0; k < 20_000; k++) {
      const head = key.slice(0, at);
      const n = normalise(head);
      if (n.text !== expected || n.ends![n.ends!.length - 1]! > head.length) {
        expect(n.text, `call ${k}`).to.equal(expected);
        expect(n.ends![n.ends!.length - 1]!, `call ${k}`).to.be.at.most(head.length);
      }
    }
  });

  it('a bold key split inside a pair: both halves masked, and the same from both engines on every call', () => {
    const { request, masked } = reference.redact(split());
    expect(masked).to.equal(2);
    expect(request.messages.map((m) => m.content)).to.deep.equal(['[REDACTED:openai-key]', '[REDACTED:openai-key]']);
    sameEveryCall('fresh');
  });

  it('every OpenAI key form in bold, split inside a pair before and after its marker: masked whole, the cut character too', () => {
    for (const raw of secretSamples().filter((x) => x.kind === 'openai-key')) {
      const k = bold(raw.value);
      const marker = k.indexOf(bold('T3BlbkFJ'));
      for (const near of [Math.floor(k.length / 3), Math.floor(k.length / 2), marker + 20, k.length - 12]) {
        let c = near;
        while (!/[\ud800-\udbff]/.test(k[c - 1]!)) c++;
        const req: ChatLike = {
          messages: [
            { role: 'user', content: `the key: ${k.slice(0, c)}` },
            { role: 'assistant', content: k.slice(c) },
          ],
        };
        for (const [name, engine] of [
          ['reference', reference],
          ['compiled', compiled],
        ] as const) {
          const out = engine.redact(req).request.messages.map((m) => m.content);
          expect(out, `${name}: ${raw.value.slice(0, 12)}... cut at ${c}`).to.deep.equal(['the key: [REDACTED:openai-key]', '[REDACTED:openai-key]']);
        }
      }
    }
  });

  it('the same after a scan that grew the module memory past its bound and the fresh instance that follows', async () => {
    const line = 'Le café du coin sert un thé très léger; the notes say the parser copies names.\n';
    compiled.scan({ messages: [{ role: 'user', content: line.repeat(8000) }] });
    expect(compiledScanner().memoryBytes()).to.be.above(RETAINED_MEMORY);
    sameEveryCall('grown memory, before the fresh instance');
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(compiledScanner().memoryBytes()).to.be.at.most(RETAINED_MEMORY);
    sameEveryCall('fresh instance');
  });
});
