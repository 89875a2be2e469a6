/**
 * The shape of a chat-completion request as the spec allows it, as a JSON Schema compiled once by ajv.
 * Limits that depend on the model (turns, tools, input characters, max_tokens) are checked after the shape,
 * in validate.ts, because the model's ceilings come from the catalog.
 *
 * Sampling parameters are accepted and dropped (the spec says so); fields the gateway does not know are
 * refused with their name, so a client never believes a parameter took effect when it did not.
 */
import { Ajv } from 'ajv';

/** OpenAI parameters that are accepted and dropped before forwarding. */
export const DROPPED_PARAMETERS = [
  'temperature',
  'top_p',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'stop',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'user',
  'metadata',
  'store',
  'stream_options',
  'service_tier',
  'reasoning_effort',
] as const;

const toolCall = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 256 },
    type: { const: 'function' },
    function: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'arguments'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, arguments: { type: 'string' } },
    },
  },
} as const;

const message = {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: {
    role: { enum: ['system', 'user', 'assistant', 'tool'] },
    content: { type: ['string', 'null'] },
    name: { type: 'string', maxLength: 256 },
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: { type: 'string', minLength: 1, maxLength: 256 },
    refusal: { type: ['string', 'null'] },
  },
} as const;

const tool = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'function'],
  properties: {
    type: { const: 'function' },
    function: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
        description: { type: 'string' },
        parameters: { type: 'object' },
        strict: { type: ['boolean', 'null'] },
      },
    },
  },
} as const;

export const chatRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    messages: { type: 'array', minItems: 1, items: message },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
    tools: { type: 'array', items: tool },
    tool_choice: {
      oneOf: [
        { enum: ['none', 'auto', 'required'] },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'function'],
          properties: {
            type: { const: 'function' },
            function: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' } } },
          },
        },
      ],
    },
    parallel_tool_calls: { type: 'boolean' },
    stream: { type: 'boolean' },
    task: { type: 'string', minLength: 1, maxLength: 64 },
    ...Object.fromEntries(DROPPED_PARAMETERS.map((p) => [p, {}])),
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
export const validateChatShape = ajv.compile(chatRequestSchema);

/** `/messages/2/content` -> `messages[2].content`, the way a client names the field. */
export function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** The strict body of POST /v1/research/jobs: exactly these five fields. */
export const jobRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'task', 'scopeId', 'max_tokens', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    task: { type: 'string', minLength: 1, maxLength: 64 },
    scopeId: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
    max_tokens: { type: 'integer', minimum: 1 },
    messages: { type: 'array', minItems: 1, items: message },
  },
} as const;

export const validateJobShape = ajv.compile(jobRequestSchema);
