/**
 * Job ids: the identical request from the same principal gets the same id whatever order its client wrote
 * keys in; anything that changes the answer, or another principal, gets another id.
 */
import { expect } from 'chai';
import { jobIdFor, type JobKey } from '../../src/jobs/job.js';

describe('job ids', () => {
  const key: JobKey = {
    model: 'shared-general-a',
    task: 'code-review',
    scopeId: null,
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'ab' },
      { role: 'user', content: 'c' },
    ],
    tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }],
  };

  it('is a version-8 UUID, the same for the same principal and request', () => {
    const id = jobIdFor('p1', key);
    expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jobIdFor('p1', structuredClone(key))).to.equal(id);
  });

  it('does not depend on the key order of tools or messages', () => {
    const reordered: JobKey = {
      ...key,
      messages: key.messages.map((m) => ({ content: m.content, role: m.role })),
      tools: [{ function: { parameters: { properties: { a: { type: 'string' } }, type: 'object' }, name: 't' }, type: 'function' }],
    };
    expect(jobIdFor('p1', reordered)).to.equal(jobIdFor('p1', key));
  });

  it('differs for another principal and for anything that changes the answer', () => {
    const id = jobIdFor('p1', key);
    expect(jobIdFor('p2', key)).not.to.equal(id);
    expect(jobIdFor('p1', { ...key, max_tokens: 101 })).not.to.equal(id);
    expect(jobIdFor('p1', { ...key, tool_choice: 'required' })).not.to.equal(id);
    expect(jobIdFor('p1', { ...key, scopeId: 'owned' })).not.to.equal(id);
    // Moving text across a message boundary is another conversation.
    expect(
      jobIdFor('p1', {
        ...key,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'bc' },
        ],
      }),
    ).not.to.equal(id);
  });
});
