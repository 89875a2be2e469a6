/**
 * The request bodies of the bench: OpenAI chat-completion requests for `shared-general-a` (a blue-team
 * model, so portcullis admits any signed-in principal), a system turn and one user turn of code-review text,
 * ~1 KB ("small") or ~100 KB of input ("large"), streaming or not.
 *
 * Every request must differ: portcullis gives identical requests the same job id and re-attaches to the
 * finished job without calling the upstream, which would measure a cache, not the path. So each body
 * carries a 16-digit nonce at a fixed byte offset; `nextBody()` writes a fresh one into a per-connection
 * copy of a prebuilt Buffer template (no JSON.stringify per request: at 100 KB that would make the load
 * generator the bottleneck). Every row of the bench gets the same bodies.
 *
 * The text is ordinary code and prose with nothing a guardrail flags (no key shapes, no long base64 or hex
 * runs, no blocked terms), so the call walks the whole admitted path; the bench checks that on a receipt.
 */

export const BENCH_MODEL = 'shared-general-a';
export const NONCE_DIGITS = 16;

export interface BodySpec {
  /** `small` (~1 KB) or `large` (~100 KB input). */
  size: 'small' | 'large';
  stream: boolean;
}

const PARAGRAPHS = [
  'Please review the following C function for memory-safety problems and suggest a minimal fix.',
  "static int parse_header(const char *buf, size_t len, struct header *out) {\n  char name[64];\n  size_t i = 0;\n  while (i < len && buf[i] != ':') { name[i] = buf[i]; i++; }\n  name[i] = 0;\n  out->value = strdup(buf + i + 1);\n  return out->value == NULL ? -1 : 0;\n}",
  'The loop copies the header name into a fixed array of sixty-four bytes without checking the bound, so a long name overruns the stack. The terminating write has the same problem when the colon is missing.',
  'def load_config(path):\n    with open(path) as f:\n        data = yaml.safe_load(f)\n    for route in data["routes"]:\n        validate_route(route)\n    return data',
  'Reviewers should also check that every error path releases the allocated value, that the caller tests the return code, and that the length passed in is the length of the buffer actually received.',
  'func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tbody, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))\n\tif err != nil {\n\t\thttp.Error(w, "bad request", http.StatusBadRequest)\n\t\treturn\n\t}\n\ts.queue <- body\n}',
  'Triage notes: the crash reproduces with a header name of two hundred characters; the fuzzer found it in under a minute; the fix is a bounds check and a test that feeds the longest name the protocol allows.',
];

/** Code-review text of about `chars` characters (UTF-8 ASCII, so bytes == chars). */
export function reviewText(chars: number): string {
  let out = '';
  for (let i = 0; out.length < chars; i++) out += `${PARAGRAPHS[i % PARAGRAPHS.length]!}\n\n`;
  return out.slice(0, chars);
}

export interface BodyTemplate {
  spec: BodySpec;
  /** The JSON body with a run of zeros where the nonce goes. */
  template: Buffer;
  /** Byte offset of the nonce in `template`. */
  nonceAt: number;
  bytes: number;
}

export function bodyTemplate(spec: BodySpec): BodyTemplate {
  const marker = '#'.repeat(NONCE_DIGITS);
  const text = reviewText(spec.size === 'small' ? 900 : 100_000);
  const json = JSON.stringify({
    model: BENCH_MODEL,
    stream: spec.stream,
    max_tokens: 256,
    messages: [
      { role: 'system', content: 'You review code for security problems. Answer briefly.' },
      { role: 'user', content: `request ${marker}\n${text}` },
    ],
  });
  const template = Buffer.from(json, 'utf8');
  const nonceAt = template.indexOf(marker);
  template.fill('0', nonceAt, nonceAt + NONCE_DIGITS);
  return { spec, template, nonceAt, bytes: template.length };
}

/** A process-wide counter, prefixed with a per-run random part, so no two requests of a run are equal. */
const runPrefix = Math.floor(Math.random() * 1e6);
let counter = 0;

export function nextNonce(): string {
  counter++;
  return `${String(runPrefix).padStart(6, '0')}${String(counter).padStart(NONCE_DIGITS - 6, '0')}`.slice(-NONCE_DIGITS);
}

/** Writes a fresh nonce into `buf` (a copy of the template) in place and returns it. */
export function stampNonce(t: BodyTemplate, buf: Buffer): Buffer {
  buf.write(nextNonce(), t.nonceAt, NONCE_DIGITS, 'latin1');
  return buf;
}

/** A fresh, independent body (for one-off requests such as the preflight check). */
export function oneBody(t: BodyTemplate): Buffer {
  return stampNonce(t, Buffer.from(t.template));
}
