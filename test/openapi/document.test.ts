/**
 * The OpenAPI document (issue #13 "Describe it") says what the API host serves: the committed
 * docs/openapi.json is the generated one (`npm run openapi` after a change), the live `GET /openapi.json`
 * serves the same, every route of the API app is a documented operation and every documented operation a
 * route, and each request body is the very schema its route validates with.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { appRoutes, openApiDocument } from '../../src/openapi/route.js';
import { createApiApp } from '../../src/app/api.js';
import type { Deps } from '../../src/app/deps.js';
import { validateChatShape, validateJobShape } from '../../src/stages/chat-schema.js';
import { ERRORS } from '../../src/errors.js';

/** Served by every listener ahead of its app (src/http/health.ts), so not routes of the API app. */
const LISTENER_ROUTES = ['GET /healthz', 'GET /readyz'];

function documented(doc: any): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

describe('the OpenAPI document of the API host', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  it('is committed as generated: run `npm run openapi` after changing a route, a schema or the error table', () => {
    const committed = JSON.parse(readFileSync(join(REPO, 'docs/openapi.json'), 'utf8'));
    expect(committed).to.deep.equal(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it('is served at GET /openapi.json without a token', async () => {
    const res = await fetch(`${gw.apiUrl}/openapi.json`);
    expect(res.status).to.equal(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc).to.deep.equal(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it('documents exactly the routes the API app serves', () => {
    // The app is only built here, not served: its routers are read for their paths and methods.
    const app = createApiApp({ store: gw.store, holder: gw.holder, meter: gw.meter, engine: gw.engine, log: { debug() {}, info() {}, warn() {}, error() {} } } as unknown as Deps);
    const routes = appRoutes(app);
    expect(routes.length).to.be.greaterThan(5);
    expect(documented(openApiDocument())).to.deep.equal([...routes, ...LISTENER_ROUTES].sort());
  });

  it('describes each request body with the schema its route validates with, and every error with the error table', () => {
    const doc = openApiDocument() as any;
    expect(doc.components.schemas.ChatRequest).to.equal(validateChatShape.schema);
    expect(doc.components.schemas.JobRequest).to.equal(validateJobShape.schema);
    expect(doc.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/ChatRequest');
    expect(doc.paths['/v1/research/jobs'].post.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/JobRequest');
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).to.have.members(Object.keys(ERRORS));
    for (const ops of Object.values(doc.paths as Record<string, Record<string, any>>)) for (const op of Object.values(ops)) expect(op.responses.default.content['application/json'].schema.$ref).to.equal('#/components/schemas/Error');
  });
});
