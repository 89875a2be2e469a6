/**
 * The shape of a chat-completion request as the gateway takes it, as a JSON Schema compiled once by ajv.
 * Which top-level fields exist, and what happens to each, is the parameter table (rules/chat-parameters.yaml,
 * applied first by src/compat/parameters.ts); this schema checks the shape of the fields the gateway
 * forwards or honours. Limits that depend on the model (turns, tools, input characters, max_tokens) are
 * checked after the shape, in request.ts, because the model's ceilings come from the catalog.
 *
 * Messages are taken as clients send them: the `developer` role, content as a string or an array of text
 * parts (other part types are refused with their name by request.ts), `name`, and `refusal` and `tool_calls`
 * with null content on assistant turns.
 */
import { Ajv } from 'ajv';
import { chatParameterTable } from '../compat/parameters.js';

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
    role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: {
      type: ['string', 'null', 'array'],
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, text: { type: 'string' } } },
    },
    name: { type: 'string', maxLength: 256 },
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: { type: 'string', minLength: 1, maxLength: 256 },
    refusal: { type: ['string', 'null'] },
    // Replayed-message bookkeeping, dropped by normalisation (src/compat/messages.ts DROPPED_MESSAGE_FIELDS).
    annotations: {},
    provider_specific_fields: {},
    reasoning_content: {},
    thinking_blocks: {},
    function_call: {},
    audio: {},
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
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
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
    parallel_tool_calls: { type: ['boolean', 'null'] },
    stream: { type: ['boolean', 'null'] },
    task: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** Structural shapes for the forwarded fields; every other field of the parameter table is taken as it is
 * here (its accepted values, if limited, are the table's `accepts`). */
const tableFields = Object.fromEntries(
  chatParameterTable()
    .parameters.filter((row) => !Object.hasOwn(chatRequestSchema.properties, row.name))
    .map((row) => [row.name, {}]),
);

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
export const validateChatShape = ajv.compile({ ...chatRequestSchema, properties: { ...chatRequestSchema.properties, ...tableFields } });

/**
 * The strict body of POST /v1/research/jobs: these five fields and no other. `scopeId` may be left out (or
 * sent as null or "", which mean the same) where the model's team needs no scope; request.ts requires it
 * where the team does.
 */
export const jobRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'task', 'max_tokens', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    task: { type: 'string', minLength: 1, maxLength: 64 },
    scopeId: { type: ['string', 'null'], pattern: '^(|[a-z0-9][a-z0-9-]{0,62})$' },
    max_tokens: { type: 'integer', minimum: 1 },
    messages: { type: 'array', minItems: 1, items: message },
  },
} as const;

export const validateJobShape = ajv.compile(jobRequestSchema);
