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

  it('keeps the ids it always gave, for small requests and for one with a long content (ids computed before the one-shot digest)', () => {
    const principal = 'did:web:x:tenant:a';
    const small: JobKey = {
      model: 'shared-general-a',
      task: 'code-review',
      scopeId: null,
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'You review code.' },
        { role: 'user', content: 'request 1\nPlease review é 東 \ud83d\ude00' },
      ],
    };
    const long: JobKey = {
      model: 'm',
      task: 't',
      scopeId: 'scope_1',
      max_tokens: 1,
      messages: [
        { role: 'user', content: 'x'.repeat(1500) + 'é' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"b":1,"a":2}' } }] },
        { role: 'tool', content: 'ok', tool_call_id: 'c1' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      seed: 7,
    };
    const refusal: JobKey = {
      model: 'm',
      task: 't',
      scopeId: null,
      max_tokens: 5,
      messages: [
        { role: 'assistant', content: 'no', refusal: 'I cannot', name: 'bot' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] as unknown as string },
      ],
      seed: null,
    };
    expect(jobIdFor(principal, small)).to.equal('dee96f09-c5c7-8623-8c3d-a8847e94f778');
    expect(jobIdFor(principal, long)).to.equal('46376dca-24ff-8a28-939b-186c32fb6f59');
    expect(jobIdFor(principal, refusal)).to.equal('5f653aa3-d3ee-8cf9-94c5-f8646c0fa8fc');
  });
});
