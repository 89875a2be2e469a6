/**
 * The OpenAPI 3.1 document of the API host, served at `GET /openapi.json` and
 * committed as docs/openapi.json (`npm run openapi` writes it; test/openapi/document.test.ts fails when the
 * committed copy, the routes of the API app, or the request schemas disagree with it).
 *
 * Its paths are the routes the API app actually serves (read from its routers), so the document cannot list
 * a route that is not there nor miss one that is: each route gets its operation from the table below, or,
 * until someone describes it there, a generic one marked `x-portcullis-undescribed` (any JSON answer, every
 * error as the table says) — visible in the committed copy and in review.
 *
 * Request bodies are the very JSON Schemas the routes validate with — the schema each compiled ajv
 * validator carries (`validateChatShape.schema`), not a copy — so the document cannot drift from what is
 * enforced. OpenAPI 3.1 is JSON Schema 2020-12, so they go in unchanged. Answers are described by the
 * fields a client relies on (more may be present); every error, on every operation, is the one shape
 * `{error:{code,message}}`, its code one of the error table's (src/errors.ts).
 */
import { ERRORS } from '../errors.js';
import { validateChatShape, validateJobShape } from '../openai/chat-schema.js';
import { SCHEMAS as SIGN_IN } from '../auth/schemas.js';
import { applicationSchema, checkoutSchema, ekycStartSchema } from '../billing/schemas.js';
import { knowledgeContextSchema, knowledgeSearchSchema } from '../knowledge/schemas.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });

const usage = {
  type: 'object',
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: {
    prompt_tokens: { type: 'integer', minimum: 0 },
    completion_tokens: { type: 'integer', minimum: 0 },
    total_tokens: { type: 'integer', minimum: 0 },
  },
};

const schemas: Record<string, Json> = {
  ChatRequest: validateChatShape.schema as Json,
  JobRequest: validateJobShape.schema as Json,
  Error: {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          // The table's codes, or a denial code an admission policy rule defines (docs/policy.md).
          code: { anyOf: [{ enum: Object.keys(ERRORS).sort() }, { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' }] },
          message: { type: 'string' },
          receiptId: { type: 'string', description: 'the receipt of a call refused or failed after admission step 3' },
        },
      },
    },
  },
  ChatCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage', 'billing', 'receiptId', 'chargedMicroUSD'],
    properties: {
      id: { type: 'string' },
      object: { const: 'chat.completion' },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'message', 'finish_reason'],
          properties: {
            index: { type: 'integer' },
            message: { type: 'object', required: ['role', 'content'], properties: { role: { const: 'assistant' }, content: { type: ['string', 'null'] } } },
            finish_reason: { type: 'string' },
          },
        },
      },
      usage,
      billing: { enum: ['free', 'paid'] },
      receiptId: { type: 'string' },
      chargedMicroUSD: { type: 'integer', minimum: 0 },
    },
  },
  Job: {
    type: 'object',
    required: ['jobId', 'status', 'billing', 'model', 'receiptId', 'pollAfterMs'],
    properties: {
      jobId: { type: 'string', format: 'uuid' },
      status: { enum: ['queued', 'running', 'succeeded', 'failed', 'expired'] },
      billing: { enum: ['free', 'paid', null] },
      model: { type: 'string' },
      receiptId: { type: ['string', 'null'] },
      pollAfterMs: { type: 'integer', minimum: 1 },
      content: { type: ['string', 'null'] },
      toolCalls: { type: ['array', 'null'] },
      finishReason: { type: ['string', 'null'] },
      error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
    },
  },
  ModelList: {
    type: 'object',
    required: ['object', 'data'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { type: 'object', required: ['id', 'object'], properties: { id: { type: 'string' }, object: { const: 'model' } } } },
    },
  },
  BillingStatus: {
    type: 'object',
    required: ['status', 'balances'],
    properties: {
      status: { type: 'string' },
      plan: { type: ['string', 'null'] },
      balances: {
        type: 'array',
        items: {
          type: 'object',
          required: ['scope', 'grantedMicroUSD', 'spentMicroUSD', 'reservedMicroUSD', 'availableMicroUSD'],
          properties: {
            scope: { type: 'string' },
            grantedMicroUSD: { type: 'integer' },
            spentMicroUSD: { type: 'integer' },
            reservedMicroUSD: { type: 'integer' },
            availableMicroUSD: { type: 'integer' },
          },
        },
      },
    },
  },
  Receipt: {
    type: 'object',
    required: ['id', 'callId', 'principalId', 'outcome'],
    properties: { id: { type: 'string' }, callId: { type: 'string' }, principalId: { type: 'string' }, outcome: { enum: ['answered', 'refused', 'failed'] } },
  },
  SecureDocument: { type: 'object' },
  VersionHistory: {
    type: 'object',
    required: ['object', 'data'],
    properties: {
      object: { const: 'list' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['document', 'version', 'sha256', 'liveSince'],
          properties: {
            document: { type: 'string' },
            version: { type: 'string' },
            sha256: { type: 'string' },
            liveSince: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
  },
  StoredVersion: {
    type: 'object',
    required: ['object', 'document', 'version', 'sha256', 'encoding', 'content'],
    properties: {
      object: { const: 'version' },
      document: { type: 'string' },
      version: { type: 'string' },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      file: { type: 'string' },
      encoding: { enum: ['utf8', 'base64'] },
      content: { type: 'string' },
      sources: { type: 'object', additionalProperties: { type: 'string' }, description: 'policy only: the Rego it was built from, by path' },
      sourceHash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "policy only: the hash of sources, the bundle manifest's sourceHash" },
    },
  },
  IssueTokenRequest: SIGN_IN.issueToken,
  RevokeTokenRequest: SIGN_IN.revokeToken,
  EkycStartRequest: ekycStartSchema,
  ApplicationRequest: applicationSchema,
  CheckoutRequest: checkoutSchema,
  ResearchStatus: {
    type: 'object',
    required: ['status', 'reason', 'freeTier', 'trust', 'scopes'],
    properties: {
      status: { enum: ['eligible', 'pending'] },
      reason: { type: ['string', 'null'] },
      freeTier: { type: 'object' },
      trust: { type: 'object' },
      scopes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'status', 'tasks'],
          properties: { id: { type: 'string' }, status: { type: 'string' }, tasks: { type: 'array', items: { type: 'string' } } },
        },
      },
    },
  },
  ProcessorPage: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } },
  Session: { type: 'object', required: ['valid'], properties: { valid: { type: 'boolean' }, username: { type: 'string' }, principalId: { type: 'string' } } },
  List: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: { type: 'object' } } } },
  Health: { type: 'object', required: ['status'], properties: { status: { enum: ['alive', 'ready'] } } },
};

/** Every error answer, whatever the status (the table says which codes each status carries). */
const errors = { default: { description: 'An error: `{error:{code,message}}` (docs/errors.md).', content: json(ref('Error')) } };
const rateLimitedHeader = { 'retry-after': { description: 'Seconds to wait (on 429 and 503 answers).', schema: { type: 'integer' } } };

function op(summary: string, responses: Json, extra: Json = {}, secured = true): Json {
  return { summary, ...(secured ? {} : { security: [] }), ...extra, responses: { ...responses, ...errors } };
}

/** The JSON Schema of a route's query, as OpenAPI query parameters (one per property). */
function queryParams(schema: { required?: readonly string[]; properties: Record<string, unknown> }): Json[] {
  return Object.entries(schema.properties).map(([name, s]) => ({ name, in: 'query', required: (schema.required ?? []).includes(name), schema: s }));
}

const body = (name: string) => ({ requestBody: { required: true, content: json(ref(name)) } });
/** A `cookie` route: a browser session only (a PAT answers 403 `pat-not-accepted`). */
const cookieOnly = { security: [{ session: [] }] };
/** A `pat / cookie` route. */
const patOrCookie = { security: [{ pat: [] }, { session: [] }] };
const object = (description: string) => ({ description, content: json({ type: 'object' }) });

/** The described operations, by `METHOD /path/{param}` as appRoutes() names a route. */
const OPERATIONS: Record<string, Json> = {
  'GET /v1/models': op(
    'The catalog: every model and whether it is served',
    { '200': { description: 'the model list', content: json(ref('ModelList')) } },
    { operationId: 'listModels' },
    false,
  ),
  'GET /v1/secure': op(
    'The rules, policy and guardrail versions in force, for reviewers',
    { '200': { description: 'the security document', content: json(ref('SecureDocument')) } },
    { operationId: 'secure' },
    false,
  ),
  'GET /v1/secure/history': op(
    'Every version of every reviewer-facing document, with when it went live',
    { '200': { description: 'the version history', content: json(ref('VersionHistory')) } },
    { operationId: 'secureHistory' },
    false,
  ),
  'GET /v1/secure/history/{document}/{ref}': op(
    'One version with its content, by hex SHA-256 or version string (policy: the wasm and its Rego; policy-data; catalog; rungs; guardrails; firewall; compliance)',
    { '200': { description: 'the version and its content, which hashes to sha256', content: json(ref('StoredVersion')) } },
    {
      operationId: 'secureHistoryVersion',
      parameters: [
        {
          name: 'document',
          in: 'path',
          required: true,
          schema: { enum: ['policy', 'policy-data', 'catalog', 'rungs', 'guardrails', 'firewall', 'compliance'] },
        },
        { name: 'ref', in: 'path', required: true, description: 'hex SHA-256 of the content, or a version string', schema: { type: 'string' } },
      ],
    },
    false,
  ),
  'POST /v1/chat/completions': op(
    'A chat completion (OpenAI-compatible), run as a job; `stream: true` answers SSE',
    {
      '200': {
        description: 'the answer, with billing, receiptId, usage and chargedMicroUSD',
        headers: { 'x-request-id': { schema: { type: 'string' } } },
        content: { ...json(ref('ChatCompletion')), 'text/event-stream': { schema: { type: 'string' } } },
      },
    },
    { operationId: 'createChatCompletion', requestBody: { required: true, content: json(ref('ChatRequest')) } },
  ),
  'POST /v1/research/jobs': op(
    'Submit a research job; identical requests under one idempotency key are one job',
    { '202': { description: 'the job, queued or running', headers: rateLimitedHeader, content: json(ref('Job')) } },
    {
      operationId: 'createJob',
      parameters: [{ name: 'idempotency-key', in: 'header', required: true, schema: { type: 'string', format: 'uuid' } }],
      requestBody: { required: true, content: json(ref('JobRequest')) },
    },
  ),
  'GET /v1/research/job': op(
    'Poll a job',
    {
      '200': { description: 'the job, finished', content: json(ref('Job')) },
      '202': { description: 'the job, still queued or running', content: json(ref('Job')) },
    },
    { operationId: 'getJob', parameters: [{ name: 'jobId', in: 'query', required: true, schema: { type: 'string', format: 'uuid' } }] },
  ),
  'GET /v1/billing/status': op(
    'The principal’s plan and balances',
    { '200': { description: 'billing status', content: json(ref('BillingStatus')) } },
    { operationId: 'billingStatus' },
  ),
  'GET /v1/receipts/{id}': op(
    'One of the principal’s own signed receipts',
    { '200': { description: 'the receipt', content: json(ref('Receipt')) } },
    { operationId: 'getReceipt', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] },
  ),
  'GET /v1/receipts': op(
    'The principal’s receipts of one UTC day',
    { '200': { description: 'the day’s receipts', content: json(ref('List')) } },
    {
      operationId: 'listReceipts',
      ...patOrCookie,
      parameters: [{ name: 'day', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } }],
    },
  ),
  'GET /v1/usage': op(
    'Calls, tokens and spend per model over the last N UTC days, and today’s counters',
    { '200': object('the usage summary') },
    { operationId: 'usage', ...patOrCookie, parameters: [{ name: 'days', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d{1,2}$' } }] },
  ),
  'GET /v1/receipts/log/checkpoint': op(
    'The latest signed checkpoint of the receipt log (a C2SP signed note)',
    { '200': { description: 'the checkpoint', content: { 'text/plain': { schema: { type: 'string' } } } } },
    { operationId: 'logCheckpoint' },
    false,
  ),
  'GET /v1/receipts/log/consistency': op(
    'A consistency proof between two tree sizes of the receipt log',
    { '200': object('{from, to, proof}') },
    {
      operationId: 'logConsistency',
      parameters: [
        { name: 'from', in: 'query', required: true, schema: { type: 'string' } },
        { name: 'to', in: 'query', required: true, schema: { type: 'string' } },
      ],
    },
    false,
  ),
  'GET /v1/receipts/log/tile/{rest}': op(
    'A C2SP tlog-tiles hash tile of the receipt log',
    { '200': { description: 'the tile', content: { 'application/octet-stream': { schema: { type: 'string' } } } } },
    { operationId: 'logTile', parameters: [{ name: 'rest', in: 'path', required: true, schema: { type: 'string' } }] },
    false,
  ),
  'GET /v1/research/status': op(
    'What the principal may do now, and what is missing next',
    { '200': { description: 'research status', content: json(ref('ResearchStatus')) } },
    { operationId: 'researchStatus', ...patOrCookie },
  ),
  'POST /v1/research/ekyc/start': op(
    'The payment processor’s page a person completes to verify (card, then identity)',
    { '200': { description: 'the processor’s URL', content: json(ref('ProcessorPage')) } },
    { operationId: 'ekycStart', ...patOrCookie, ...body('EkycStartRequest') },
  ),
  'GET /v1/research/ekyc/status': op(
    'The verification state, with evidence references and expiry',
    { '200': object('the verification state') },
    { operationId: 'ekycStatus', ...patOrCookie },
  ),
  'POST /v1/research/applications': op(
    'Apply for a research scope under the acceptable-use policy in force',
    { '202': object('the application, submitted') },
    { operationId: 'apply', ...patOrCookie, ...body('ApplicationRequest') },
  ),
  'GET /v1/billing/catalog': op(
    'Plans, rates, top-ups and credit tiers, and whether each can be bought',
    { '200': object('the catalog') },
    { operationId: 'billingCatalog' },
    false,
  ),
  'POST /v1/billing/checkout': op(
    'A hosted checkout page for a plan or a top-up (idempotent on requestId)',
    { '200': { description: 'the checkout URL', content: json(ref('ProcessorPage')) } },
    { operationId: 'checkout', ...cookieOnly, ...body('CheckoutRequest') },
  ),
  'POST /v1/billing/portal': op(
    'The processor’s customer portal, for billing and cancellation',
    { '200': { description: 'the portal URL', content: json(ref('ProcessorPage')) } },
    { operationId: 'portal', ...cookieOnly },
  ),
  'POST /v1/webhooks/stripe': op(
    'Stripe’s webhook: a signed event, applied once per event id',
    { '200': object('what the event did') },
    {
      operationId: 'stripeWebhook',
      security: [],
      parameters: [{ name: 'stripe-signature', in: 'header', required: true, schema: { type: 'string' } }],
      requestBody: { required: true, content: json({ type: 'object' }) },
    },
  ),
  'GET /v1/session': op(
    'The browser session: who is signed in',
    { '200': { description: 'the session', content: json(ref('Session')) } },
    { operationId: 'session', ...cookieOnly },
  ),
  'POST /v1/session/end': op('Sign this session out', { '200': object('{ended}') }, { operationId: 'signOut', ...cookieOnly }),
  'POST /v1/session/end-all': op('Sign out every session of the principal', { '200': object('{ended}') }, { operationId: 'signOutEverywhere', ...cookieOnly }),
  'POST /v1/account/api-token': op(
    'Issue a personal access token, shown once',
    { '200': object('{id, label, token}') },
    { operationId: 'issueToken', ...cookieOnly, ...body('IssueTokenRequest') },
  ),
  'GET /v1/account/api-tokens': op(
    'The principal’s tokens (never the tokens themselves)',
    { '200': { description: 'the tokens', content: json(ref('List')) } },
    { operationId: 'listTokens', ...cookieOnly },
  ),
  'GET /v1/account/applications': op(
    'The principal’s own research applications and where each stands, oldest first',
    { '200': { description: 'the applications', content: json(ref('List')) } },
    { operationId: 'listApplications', ...cookieOnly },
  ),
  'POST /v1/account/api-token/revoke': op(
    'Revoke one of the principal’s tokens',
    { '200': object('{id, label, revokedAt}') },
    { operationId: 'revokeToken', ...cookieOnly, ...body('RevokeTokenRequest') },
  ),
  'GET /v1/knowledge/search': op(
    'Ranked full-text search over public security evidence (CORS open)',
    { '200': object('{query, total, offset, limit, data: [{id, kind, title, snippet, score}]}') },
    { operationId: 'knowledgeSearch', parameters: queryParams(knowledgeSearchSchema) },
    false,
  ),
  'GET /v1/knowledge/context': op(
    'One entry of the evidence with its full text and typed relations (CORS open)',
    { '200': object('the entry and its relations') },
    { operationId: 'knowledgeContext', parameters: queryParams(knowledgeContextSchema) },
    false,
  ),
  'OPTIONS /v1/knowledge/search': {
    summary: 'CORS preflight: any origin may read the knowledge routes',
    operationId: 'knowledgeSearchPreflight',
    security: [],
    responses: { '204': { description: 'the CORS headers' }, ...errors },
  },
  'OPTIONS /v1/knowledge/context': {
    summary: 'CORS preflight: any origin may read the knowledge routes',
    operationId: 'knowledgeContextPreflight',
    security: [],
    responses: { '204': { description: 'the CORS headers' }, ...errors },
  },
  'GET /v1/security/services': op(
    'The public catalog of the service’s security services',
    { '200': object('the services') },
    { operationId: 'securityServices' },
    false,
  ),
  'GET /v1/control-plane': op(
    'The service-discovery profile: hosts, wires, auth, MCP endpoints, versions',
    { '200': object('the profile') },
    { operationId: 'controlPlane' },
    false,
  ),
  'GET /openapi.json': op(
    'This document',
    { '200': { description: 'the OpenAPI document', content: json({ type: 'object' }) } },
    { operationId: 'openapi' },
    false,
  ),
  'GET /healthz': op('Alive (every listener)', { '200': { description: 'alive', content: json(ref('Health')) } }, { operationId: 'healthz' }, false),
  'GET /readyz': op(
    'Ready for traffic (every listener): runtime, policy and store, not draining',
    { '200': { description: 'ready', content: json(ref('Health')) } },
    { operationId: 'readyz' },
    false,
  ),
};

/** Served by every listener ahead of its app (src/http/health.ts), so not among an app's routes. */
export const LISTENER_ROUTES = ['GET /healthz', 'GET /readyz'];

/** A route nobody has described yet: its path parameters, any JSON answer, every error as the table says. */
function undescribed(method: string, path: string): Json {
  const params = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  if (method === 'OPTIONS')
    return {
      summary: `CORS preflight of ${path}`,
      security: [],
      'x-portcullis-undescribed': true,
      ...(params.length ? { parameters: params } : {}),
      responses: { '204': { description: 'the CORS headers' }, ...errors },
    };
  return {
    summary: `${method} ${path} (not described yet: src/openapi/document.ts)`,
    'x-portcullis-undescribed': true,
    ...(params.length ? { parameters: params } : {}),
    // Any answer: an undescribed route may answer JSON, a signed note or bytes (the receipt log's tiles).
    responses: { '2XX': { description: 'the answer', content: { '*/*': { schema: {} } } }, ...errors },
  };
}

/** The document for the routes an API app serves (`METHOD /path/{param}`, as appRoutes() lists them). */
export function buildOpenApi(version: string, routes: readonly string[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of [...new Set([...routes, ...LISTENER_ROUTES])].sort()) {
    const [method, path] = route.split(' ') as [string, string];
    (paths[path] ??= {})[method.toLowerCase()] = OPERATIONS[route] ?? undescribed(method, path);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'portcullis API',
      version,
      description: 'The research API host of portcullis. Every error is {error:{code,message}}; see docs/errors.md.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: 'http://localhost:8080', description: 'the API listener of `npm start`' }],
    security: [{ pat: [] }],
    paths,
    components: {
      securitySchemes: {
        pat: { type: 'http', scheme: 'bearer', description: 'A personal access token (pcl_pat_…)' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'portcullis_session',
          description:
            'A browser session (docs/sign-in.md; the cookie name is sessions.cookieName, portcullis_session by default); its POSTs must come from a configured origin',
        },
      },
      schemas,
    },
  };
}
