/** The chat and job request schemas, at the path some tests import them from; they live in src/openai/chat-schema.ts. */
export { chatRequestSchema, jobRequestSchema, validateChatShape, validateJobShape } from '../openai/chat-schema.js';
