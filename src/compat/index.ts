/**
 * Client compatibility: what the gateway does with each field of OpenAI's chat-completions request (the
 * parameter table), messages as clients send them, the nesting bound, and the one forwarding schema. The
 * control-plane profile serves `chatParameterTable()`.
 */
export { chatParameterTable, checkParameters, parameterRow, type ParameterRow, type Treatment } from './parameters.js';
export { normaliseMessages, canonicalArguments, type ChatMessage, type ClientMessage } from './messages.js';
export { checkDepth, jsonDepth, MAX_DEPTH } from './depth.js';
export { upstreamBody, upstreamPayload, forwardedChars, type ForwardedRequest } from './forwarded.js';
