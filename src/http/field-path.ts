/**
 * Where in a JSON body a schema error is, named the way a client names the field: ajv's `instancePath`
 * `/messages/2/content` is `messages[2].content`. Every route that answers a shape error with `param`
 * (where OpenAI clients read it) names the field this way.
 */
export function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}
