/**
 * The OpenAPI document says what the API host serves: the live `GET /openapi.json`
 * lists exactly the routes of the API app (and the listener's health routes), the committed
 * docs/openapi.json is that document (`npm run openapi` after a change), the core routes are described
 * rather than generic, and each request body is the very schema its route validates with.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { appRoutes } from '../../src/openapi/route.js';
import { LISTENER_ROUTES } from '../../src/openapi/document.js';
import { validateChatShape, validateJobShape } from '../../src/stages/chat-schema.js';
import { ERRORS } from '../../src/errors.js';

function documented(doc: any): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

describe('the OpenAPI document of the API host', () => {
  let gw: TestGateway;
  let served: any;
  before(async () => {
    gw = await startTestGateway();
    const res = await fetch(`${gw.apiUrl}/openapi.json`);
    expect(res.status).to.equal(200);
    served = await res.json();
  });
  after(() => gw.close());

  it('is served at GET /openapi.json without a token, listing exactly the routes the API app serves', () => {
    expect(served.openapi).to.equal('3.1.0');
    const routes = appRoutes(gw.apps.api);
    expect(routes.length).to.be.greaterThan(5);
    expect(documented(served)).to.deep.equal([...new Set([...routes, ...LISTENER_ROUTES])].sort());
  });

  it('is committed as served: run `npm run openapi` after changing a route, a schema or the error table', () => {
    const committed = JSON.parse(readFileSync(join(REPO, 'docs/openapi.json'), 'utf8'));
    expect(committed).to.deep.equal(served);
  });

  it('describes the chat, job, billing, receipt, catalog and health routes, not generically', () => {
    for (const route of [
      'POST /v1/chat/completions',
      'POST /v1/research/jobs',
      'GET /v1/research/job',
      'GET /v1/billing/status',
      'GET /v1/receipts/{id}',
      'GET /v1/models',
      'GET /healthz',
      'GET /readyz',
    ]) {
      const [method, path] = route.split(' ') as [string, string];
      const op = served.paths[path]?.[method.toLowerCase()];
      expect(op, route).to.be.an('object');
      expect(op['x-portcullis-undescribed'], route).to.equal(undefined);
    }
  });

  it('describes each request body with the schema its route validates with, and every error with the error table', () => {
    expect(served.components.schemas.ChatRequest).to.deep.equal(JSON.parse(JSON.stringify(validateChatShape.schema)));
    expect(served.components.schemas.JobRequest).to.deep.equal(JSON.parse(JSON.stringify(validateJobShape.schema)));
    expect(served.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/ChatRequest');
    expect(served.paths['/v1/research/jobs'].post.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/JobRequest');
    // The table's codes, or one a policy rule defines (a denial code is the policy's data).
    const code = served.components.schemas.Error.properties.error.properties.code;
    expect(code.anyOf[0].enum).to.have.members(Object.keys(ERRORS));
    expect(code.anyOf[1]).to.deep.equal({ type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
    for (const ops of Object.values(served.paths as Record<string, Record<string, any>>))
      for (const op of Object.values(ops)) expect(op.responses.default.content['application/json'].schema.$ref).to.equal('#/components/schemas/Error');
  });
});
