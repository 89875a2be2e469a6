/**
 * The credential shapes that still reached the upstream after the first two passes, each as a family of
 * variants (ours, written as an attacker would vary them): keys in template literals, wrapped at a column,
 * built by concatenation; webhook URLs cut by a shell line continuation; AWS secrets in the console's CSV
 * export and INI files; passwords in database URLs; connection-string secrets; long bearer JWTs; dash
 * look-alikes from the whole Unicode dash class; octal and other character escapes; encodings composed with
 * a reversal; AWS key ids lower-cased or glued to digits. Each variant names the secret that must not
 * survive. Nothing here is a real credential; prefixes are joined from parts.
 */
import { rng } from './secrets.js';

const j = (...p: string[]) => p.join('');
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const r = rng(2611270);
function pick(n: number, alphabet = B62): string {
  for (;;) {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
    if (alphabet !== B62 || (/[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s))) return s;
  }
}
const rev = (s: string) => [...s].reverse().join('');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

export interface ShapeVariant {
  family: string;
  name: string;
  text: string;
  /** What must not reach the model (each, whole or any 10 characters of it). */
  secret: string;
  /** The mask that must appear. */
  kind: string;
}

export const OPENAI = j('sk', '-proj-', pick(48));
export const STRIPE = j('sk', '_live_', pick(48));
export const AWS_ID = j('AK', 'IA', pick(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'));
export const AWS_SECRET = pick(40, B62 + '/+');
const SLACK_HOOK = j(
  'https://hooks.',
  'slack.com/services/T',
  pick(9, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  '/B',
  pick(9, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  '/',
  pick(24),
);
const DB_PASSWORD = j('Tr0ub4dor', '&3horse', pick(6));
const WEAK_PASSWORD = 'hunterhunter42';
const AZURE_KEY = Buffer.from(pick(64)).toString('base64').slice(0, 86) + '==';
const JWT = j(
  'eyJ',
  b64url('{"alg":"RS256","typ":"JWT","kid":"k1"}').slice(3),
  '.',
  b64url(JSON.stringify({ sub: 'u1', scope: 'admin', data: pick(600) })),
  '.',
  pick(342, B62 + '-_'),
);
const wrap = (s: string, n: number) => s.match(new RegExp(`.{1,${n}}`, 'g'))!.join('\n');

export function shapeVariants(): ShapeVariant[] {
  const v: ShapeVariant[] = [];
  const add = (family: string, name: string, text: string, secret: string, kind: string) => v.push({ family, name, text, secret, kind });

  // A key inside a JS template literal.
  add('template literal', 'empty interpolation', `const key = \`${OPENAI.slice(0, 20)}\${""}${OPENAI.slice(20)}\`;`, OPENAI, 'openai-key');
  add('template literal', 'empty interpolation, single quotes', `const key = \`${OPENAI.slice(0, 11)}\${''}${OPENAI.slice(11)}\`;`, OPENAI, 'openai-key');
  add(
    'template literal',
    'literal interpolation',
    `headers.Authorization = \`Bearer ${STRIPE.slice(0, 24)}\${"${STRIPE.slice(24, 40)}"}${STRIPE.slice(40)}\`;`,
    STRIPE,
    'stripe-key',
  );
  add(
    'template literal',
    'two empty interpolations',
    `k = \`${AWS_ID.slice(0, 8)}\${\`\`}${AWS_ID.slice(8, 14)}\${""}${AWS_ID.slice(14)}\``,
    AWS_ID,
    'aws-access-key-id',
  );
  // (second look) any short interpolation, and other languages' concatenation and continuation.
  add('template literal', 'an empty array interpolated', `k = \`${OPENAI.slice(0, 20)}\${[]}${OPENAI.slice(20)}\``, OPENAI, 'openai-key');
  add('template literal', 'a variable interpolated', `k = \`${OPENAI.slice(0, 20)}\${sep}${OPENAI.slice(20)}\``, OPENAI, 'openai-key');
  // A provider key wrapped at a fixed column.
  for (const n of [16, 24, 40, 64]) add('wrapped at a column', `stripe key at ${n} columns`, `STRIPE_KEY:\n${wrap(STRIPE, n)}\nend`, STRIPE, 'stripe-key');
  add('wrapped at a column', 'openai key at 20 columns, CRLF', wrap(OPENAI, 20).replace(/\n/g, '\r\n'), OPENAI, 'openai-key');
  add('wrapped at a column', 'after a label, then the column', `OPENAI_API_KEY=${OPENAI.slice(0, 25)}\n${OPENAI.slice(25)}`, OPENAI, 'openai-key');
  // A key built by string concatenation.
  add('concatenation', 'JS, same line', `const k = "${OPENAI.slice(0, 18)}" + "${OPENAI.slice(18)}";`, OPENAI, 'openai-key');
  add(
    'concatenation',
    'JS, three pieces over lines',
    `const k = '${STRIPE.slice(0, 14)}' +\n  '${STRIPE.slice(14, 30)}' +\n  '${STRIPE.slice(30)}';`,
    STRIPE,
    'stripe-key',
  );
  add('concatenation', 'Python implicit, over lines', `key = (\n    "${OPENAI.slice(0, 22)}"\n    "${OPENAI.slice(22)}"\n)`, OPENAI, 'openai-key');
  add('concatenation', 'C adjacent literals', `char *k = "${AWS_ID.slice(0, 10)}" "${AWS_ID.slice(10)}";`, AWS_ID, 'aws-access-key-id');
  add('concatenation', 'backticks with +', `k = \`${OPENAI.slice(0, 30)}\`+\`${OPENAI.slice(30)}\``, OPENAI, 'openai-key');
  add('concatenation', '.concat()', `k = "${OPENAI.slice(0, 20)}".concat("${OPENAI.slice(20)}")`, OPENAI, 'openai-key');
  add('concatenation', 'PHP dot', `$k = '${OPENAI.slice(0, 20)}' . '${OPENAI.slice(20)}';`, OPENAI, 'openai-key');
  add('concatenation', 'SQL ||', `SELECT '${STRIPE.slice(0, 20)}' || '${STRIPE.slice(20)}';`, STRIPE, 'stripe-key');
  add('concatenation', 'Lua ..', `k = "${OPENAI.slice(0, 20)}" .. "${OPENAI.slice(20)}"`, OPENAI, 'openai-key');
  add('concatenation', 'VB &', `k = "${OPENAI.slice(0, 20)}" & "${OPENAI.slice(20)}"`, OPENAI, 'openai-key');
  // A webhook URL split by a shell line continuation.
  const cut = SLACK_HOOK.length - 12;
  add(
    'shell line continuation',
    'in the secret part',
    `curl -X POST ${SLACK_HOOK.slice(0, cut)}\\\n${SLACK_HOOK.slice(cut)} -d @msg.json`,
    SLACK_HOOK,
    'slack-token',
  );
  add(
    'shell line continuation',
    'indented next line',
    `curl -X POST \\\n  ${SLACK_HOOK.slice(0, 40)}\\\n    ${SLACK_HOOK.slice(40)}`,
    SLACK_HOOK,
    'slack-token',
  );
  add('shell line continuation', 'key in an export', `export OPENAI_API_KEY=${OPENAI.slice(0, 30)}\\\n${OPENAI.slice(30)}`, OPENAI, 'openai-key');
  add('shell line continuation', 'cmd caret', `set KEY=${OPENAI.slice(0, 20)}^\n${OPENAI.slice(20)}`, OPENAI, 'openai-key');
  add('shell line continuation', 'Dockerfile ENV', `ENV STRIPE_KEY=${STRIPE.slice(0, 26)}\\\n    ${STRIPE.slice(26)}`, STRIPE, 'stripe-key');
  // An AWS secret in the credentials CSV export (old and new console formats), and INI.
  add(
    'aws credentials csv',
    'console export with user name',
    `User name,Password,Access key ID,Secret access key,Console login link\nci-bot,,${AWS_ID},${AWS_SECRET},https://123456789012.signin.aws.amazon.com/console\n`,
    AWS_SECRET,
    'aws-secret-key',
  );
  add('aws credentials csv', 'access keys export', `Access key ID,Secret access key\n${AWS_ID},${AWS_SECRET}\n`, AWS_SECRET, 'aws-secret-key');
  add('aws credentials csv', 'quoted cells, CRLF', `"Access key ID","Secret access key"\r\n"${AWS_ID}","${AWS_SECRET}"\r\n`, AWS_SECRET, 'aws-secret-key');
  add('aws credentials csv', 'semicolon-separated', `Access key ID;Secret access key\n${AWS_ID};${AWS_SECRET}\n`, AWS_SECRET, 'aws-secret-key');
  add('aws credentials csv', 'tab-separated', `Access key ID\tSecret access key\n${AWS_ID}\t${AWS_SECRET}\n`, AWS_SECRET, 'aws-secret-key');
  add('aws credentials csv', 'secret alone on its row', `Secret access key\n${AWS_SECRET}\n`, AWS_SECRET, 'aws-secret-key');
  add(
    'ini credential export',
    'aws credentials file',
    `[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\nregion = eu-west-1\n`,
    AWS_SECRET,
    'aws-secret-key',
  );
  add('ini credential export', 'database password', `[database]\nhost = db.internal\nuser = app\npassword = ${WEAK_PASSWORD}\n`, WEAK_PASSWORD, 'password');
  add(
    'ini credential export',
    'client secret with a comment',
    `[oauth]\nclient_id = portal\nclient_secret = ${DB_PASSWORD} ; rotate monthly\n`,
    DB_PASSWORD,
    'password',
  );
  add(
    'ini credential export',
    'JSON SecretAccessKey',
    `{"AccessKey": {"AccessKeyId": "${AWS_ID}", "SecretAccessKey": "${AWS_SECRET}"}}`,
    AWS_SECRET,
    'aws-secret-key',
  );
  add('ini credential export', 'env file password', `POSTGRES_USER=app\nPOSTGRES_PASSWORD=${WEAK_PASSWORD}\n`, WEAK_PASSWORD, 'password');
  add('ini credential export', 'YAML password, quoted', `db:\n  db_password: "${DB_PASSWORD}"\n`, DB_PASSWORD, 'password');
  // A password inside a database URL.
  for (const scheme of ['postgres', 'postgresql', 'mysql', 'mongodb+srv', 'redis', 'rediss', 'amqp', 'amqps']) {
    add('database url', scheme, `DATABASE_URL=${scheme}://app_user:${DB_PASSWORD}@db-1.internal:5432/app?sslmode=require`, DB_PASSWORD, 'url-password');
  }
  add('database url', 'redis without a user', `redis://:${WEAK_PASSWORD}@cache.internal:6379/0`, WEAK_PASSWORD, 'url-password');
  add('database url', 'an unescaped @ in the password', `postgres://admin:p@ss${WEAK_PASSWORD}@10.0.0.5/prod`, `p@ss${WEAK_PASSWORD}`, 'url-password');
  add('database url', 'in prose', `connect with mysql://root:${WEAK_PASSWORD}@127.0.0.1:3306/shop and run the migration`, WEAK_PASSWORD, 'url-password');
  add('database url', 'JDBC password in the query', `jdbc:postgresql://db:5432/app?user=app&password=${WEAK_PASSWORD}&ssl=true`, WEAK_PASSWORD, 'password');
  add('database url', 'upper-case scheme', `POSTGRES://app:${DB_PASSWORD}@db/app`, DB_PASSWORD, 'url-password');
  // Quotes and `#` in the password: `'` is a legal sub-delimiter, `#` is written unescaped like `@`.
  add('database url', "a ' in the password", `config: postgres://app:${DB_PASSWORD}'x@db.internal:5432/prod end`, `${DB_PASSWORD}'x`, 'url-password');
  add('database url', 'a # in the password', `mysql+pymysql://app:${DB_PASSWORD}!#@db/x`, `${DB_PASSWORD}!#`, 'url-password');
  add('database url', "a ' in the password, IPv6 host", `postgres://app:pa'${DB_PASSWORD}@[2001:db8::1]:5432/x`, `pa'${DB_PASSWORD}`, 'url-password');
  add('database url', "a ' in a git remote's password", `git clone https://bob:${DB_PASSWORD}'#@github.com/org/repo.git`, `${DB_PASSWORD}'#`, 'url-password');
  // Connection strings.
  add(
    'connection string',
    'Azure storage AccountKey',
    `DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net`,
    AZURE_KEY,
    'connection-string',
  );
  add(
    'connection string',
    'Service Bus SharedAccessKey',
    `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${AZURE_KEY.slice(0, 44)}`,
    AZURE_KEY.slice(0, 44),
    'connection-string',
  );
  const SIG = pick(43) + '%3D';
  add(
    'connection string',
    'SharedAccessSignature',
    `BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01T00:00:00Z&sig=${SIG}`,
    SIG,
    'connection-string',
  );
  add(
    'connection string',
    'ADO.NET Password',
    `Server=tcp:acme.database.windows.net,1433;Initial Catalog=shop;User ID=app;Password=${DB_PASSWORD};Encrypt=True;`,
    DB_PASSWORD,
    'connection-string',
  );
  add('connection string', 'AccountKey in JSON', `{"AccountName": "acme", "AccountKey": "${AZURE_KEY}"}`, AZURE_KEY, 'connection-string');
  add(
    'connection string',
    'quoted ADO.NET Password holding a semicolon',
    `Server=db;User Id=app;Password="${DB_PASSWORD};x";`,
    DB_PASSWORD,
    'connection-string',
  );
  add('connection string', 'ODBC Pwd', `Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd=${WEAK_PASSWORD};`, WEAK_PASSWORD, 'connection-string');
  // The tail of a long Bearer JWT.
  add('bearer jwt', 'Authorization header', `Authorization: Bearer ${JWT}`, JWT.slice(JWT.lastIndexOf('.') + 1), 'jwt');
  add('bearer jwt', 'curl -H', `curl -H "Authorization: Bearer ${JWT}" https://api.example.org/v1/me`, JWT.slice(JWT.lastIndexOf('.') + 1), 'jwt');
  add('bearer jwt', 'cookie', `Cookie: session=${JWT}; Path=/`, JWT.slice(JWT.lastIndexOf('.') + 1), 'jwt');
  const SPACED_JWT = j(b64url('{ "alg": "HS256", "typ": "JWT" }'), '.', b64url('{ "sub": "u2", "role": "admin" }'), '.', pick(43, B62 + '-_'));
  add(
    'bearer jwt',
    'JSON with spaces (header starts ey but not eyJ)',
    `Authorization: Bearer ${SPACED_JWT}`,
    SPACED_JWT.slice(SPACED_JWT.lastIndexOf('.') + 1),
    'jwt',
  );
  // Dash look-alikes from the whole Unicode dash class, and minus signs.
  for (const dash of [
    '\u058a',
    '\u05be',
    '\u1400',
    '\u1806',
    '\u2e17',
    '\u2e1a',
    '\u2e3a',
    '\u2e3b',
    '\u2e40',
    '\u301c',
    '\u3030',
    '\u30a0',
    '\ufe31',
    '\ufe32',
    '\u2796',
    '\u2212',
    '\u208b',
    '\u3161',
    '\u2e5d',
  ]) {
    add('dash confusables', `U+${dash.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`, OPENAI.replace(/-/g, dash), OPENAI.slice(8), 'openai-key');
  }
  // Character-code escapes.
  add('escapes', 'octal, 1 to 3 digits', [...Buffer.from(OPENAI)].map((b) => '\\' + b.toString(8)).join(''), OPENAI, 'openai-key');
  add(
    'escapes',
    'octal, every third character',
    [...STRIPE].map((c, i) => (i % 3 === 0 ? '\\' + c.charCodeAt(0).toString(8) : c)).join(''),
    STRIPE,
    'stripe-key',
  );
  add('escapes', 'octal for the dashes only', OPENAI.replace(/-/g, '\\55'), OPENAI, 'openai-key');
  add('escapes', '\\x{..} braces', [...OPENAI].map((c) => `\\x{${c.charCodeAt(0).toString(16)}}`).join(''), OPENAI, 'openai-key');
  add('escapes', 'upper-case \\X', [...AWS_ID].map((c) => `\\X${c.charCodeAt(0).toString(16)}`).join(''), AWS_ID, 'aws-access-key-id');
  add('escapes', '\\U00000073', [...OPENAI].map((c) => `\\U${c.charCodeAt(0).toString(16).padStart(8, '0')}`).join(''), OPENAI, 'openai-key');
  add('escapes', '%u0073', [...OPENAI].map((c) => `%u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''), OPENAI, 'openai-key');
  add('escapes', '\\x doubled inside a JSON string', [...OPENAI].map((c) => `\\\\x${c.charCodeAt(0).toString(16)}`).join(''), OPENAI, 'openai-key');
  add('escapes', 'octal doubled inside a JSON string', [...STRIPE].map((c) => `\\\\${c.charCodeAt(0).toString(8)}`).join(''), STRIPE, 'stripe-key');
  add('escapes', 'HTML decimal without semicolons', [...OPENAI].map((c) => `&#${c.charCodeAt(0)}`).join(''), OPENAI, 'openai-key');
  // Encodings composed with a reversal.
  add('reversal composed', 'reversed base64', rev(Buffer.from(OPENAI).toString('base64')), OPENAI, 'openai-key');
  add(
    'reversal composed',
    'reversed base64, no padding',
    rev(
      Buffer.from(OPENAI + 'x')
        .toString('base64')
        .replace(/=+$/, ''),
    ),
    OPENAI,
    'openai-key',
  );
  add('reversal composed', 'base64 of the reversed key', Buffer.from(rev(OPENAI)).toString('base64'), OPENAI, 'openai-key');
  add('reversal composed', 'hex of the reversed key', Buffer.from(rev(STRIPE)).toString('hex'), STRIPE, 'stripe-key');
  add('reversal composed', 'reversed hex', rev(Buffer.from(OPENAI).toString('hex')), OPENAI, 'openai-key');
  add('reversal composed', 'base64 of the reversed AWS id', Buffer.from(rev(AWS_ID)).toString('base64'), AWS_ID, 'aws-access-key-id');
  add('reversal composed', 'reversed base64 of an AWS id', rev(Buffer.from(`id=${AWS_ID}`).toString('base64')), AWS_ID, 'aws-access-key-id');
  // AWS key ids lower-cased or glued to digits.
  add('aws key id', 'glued to digits both sides', `2024${AWS_ID}0917`, AWS_ID, 'aws-access-key-id');
  add('aws key id', 'glued to digits before', `id:00${AWS_ID}`, AWS_ID, 'aws-access-key-id');
  add('aws key id', 'lower case glued to digits', `99${AWS_ID.toLowerCase()}42`, AWS_ID.toLowerCase(), 'aws-access-key-id');
  add('aws key id', 'lower case in a sentence', `the id is ${AWS_ID.toLowerCase()}, keep it`, AWS_ID.toLowerCase(), 'aws-access-key-id');
  return v;
}

/** Text that looks like these shapes and is not a credential: placeholders, references, public values. */
export const LOOKALIKES = [
  'DATABASE_URL=postgres://user:${PGPASSWORD}@localhost:5432/app',
  'postgres://postgres:postgres@localhost/test',
  'mongodb+srv://<username>:<password>@cluster0.example.net/',
  'redis://:%s@%s:%d/0',
  'amqp://guest:guest@localhost:5672/',
  'see https://user:pass@example.com for the syntax',
  "urls = ['http://localhost:8080','admin@example.org']",
  "hosts=('https://cache:6379','ops@example.org')",
  'DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=<your-account-key>;',
  'Server=myServer;Database=myDb;User Id=myUser;Password=myPassword;',
  'Server=db;Uid=app;Pwd=${DB_PASSWORD};',
  'PASSWORD=changeme ./run.sh',
  'const url = "https://api.example.org/" + path + "?q=" + query;',
  'echo "build" "done" && exit 0',
  'printf \'%s\\n\' "$a" "$b"',
  'make \\\n  all \\\n  install',
  '[server]\nport = 8080\npassword_min_length = 12\nsecret_name = prod/db/primary\n',
  '[auth]\npassword = ${AUTH_PASSWORD}\ntoken = <token>\n',
  'User name,Password,Access key ID\nalice,,\n',
  'name,token,created\nbuild,,2024-01-01\n',
  'commit 3f4e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f and tree 0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b',
  'a JWT looks like eyJhbGciOi... (header), then the payload and the signature',
  'ranges: 10〜20 items, 5−3 = 2, pages 3–7',
  'version 20240917AKIA is not a key id, nor is ABCDAKIAIOSFODNN7EXAMPLEXYZ',
  'POSTGRES_PASSWORD=${POSTGRES_PASSWORD}\nMYSQL_ROOT_PASSWORD_FILE=/run/secrets/db\n',
  'password = os.environ.get("DB_PASSWORD")',
  'db_password: "{{ vault_db_password }}"',
  'const password = getPassword(user);',
  'GET /v1/search?q=rust&token=YOUR_TOKEN&page=2',
  'callback?code=abc&state=xyz',
  '{"AccountKey": "<storage-account-key>"}',
  'const s = `Hello, ${name}! You have ${count} new messages.`;',
  "const msg = 'Total: ' + total + ' items';",
  '$label = $first . " " . $last;',
  'find . -name "*.ts" \\\n  -newer package.json',
];
