/**
 * The site's machine-readable entry points, generated at start from the project's own docs (README.md and
 * docs/*.md) and this deployment's origins, never kept by hand beside them:
 *
 * - /llms.txt (the llms.txt convention: a title, a summary in a blockquote, then sections of links),
 * - /llms-full.txt (README and every doc in full, as Markdown),
 * - /agent-quickstart.md (the "Agent procedure" section of docs/agents.md),
 * - /docs/<name>.md (each doc, so the links above resolve on this host).
 *
 * The docs write addresses as the spec's placeholders ({base_url}, {auth_url}, {console_url}, {site_url},
 * {graph_url}); here they become this deployment's public origins.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import type { HostName } from '../config/types.js';

export const DOCS_DIR = new URL('../../docs/', import.meta.url);
export const README = new URL('../../README.md', import.meta.url);

export interface TextDocument {
  text: string;
  type: string;
  etag: string;
}

const doc = (text: string, type: string): TextDocument => ({ text, type, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` });

function placeholders(origins: Record<HostName, string>): (text: string) => string {
  const map: Record<string, string> = {
    base_url: origins.api,
    api_url: origins.api,
    auth_url: origins.auth,
    console_url: origins.console,
    site_url: origins.site,
    graph_url: origins.graph,
    docs_url: `${origins.site}/docs`,
  };
  return (text) => text.replace(/\{(base_url|api_url|auth_url|console_url|site_url|graph_url|docs_url)\}/g, (_, k: string) => map[k]!);
}

/** The section under `## <heading>` up to the next `## `, or null. */
export function section(markdown: string, heading: string): string | null {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .trim();
}

/** The first paragraph of prose after the title (not a heading, list, table, badge or comment). */
function summary(markdown: string): string {
  const paragraphs = markdown.split(/\n\s*\n/).map((p) => p.trim());
  return paragraphs.find((p) => p && !/^(#|[-*|>]|<|!\[|```)/.test(p))?.replace(/\s+/g, ' ') ?? '';
}

/** At most `max` characters: whole sentences when they fit, else whole words and an ellipsis, never a cut word. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const sentences = text.slice(0, max + 1).match(/^.*[.:;!?](?=\s)/)?.[0];
  if (sentences && sentences.length >= max / 2) return sentences;
  const cut = text.slice(0, max).replace(/\s+\S*$/, '');
  return `${cut.replace(/[\s,;:(]+$/, '')}…`;
}

const title = (markdown: string, fallback: string) => /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? fallback;

export interface SiteDocuments {
  llmsTxt: TextDocument;
  llmsFullTxt: TextDocument;
  quickstart: TextDocument;
  docs: Map<string, TextDocument>;
}

export function buildSiteDocuments(origins: Record<HostName, string>): SiteDocuments {
  const fill = placeholders(origins);
  const readme = fill(readFileSync(README, 'utf8'));
  const names = readdirSync(DOCS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort();
  const docs = new Map(names.map((f) => [f.slice(0, -3), fill(readFileSync(new URL(f, DOCS_DIR), 'utf8'))]));
  const site = origins.site;
  const api = origins.api;

  const llms = [
    `# ${title(readme, 'portcullis')}`,
    '',
    `> ${summary(readme)}`,
    '',
    `Agents: connect an MCP client to ${site}/mcp (streamable HTTP, no sessions), or read ${site}/mcp.json for the plain-HTTP tools. ` +
      `A person issues your personal access token (PAT); send it as \`Authorization: Bearer <PAT>\`. Public knowledge needs no token.`,
    '',
    '## Docs',
    '',
    ...[...docs].map(([name, text]) => `- [${title(text, name)}](${site}/docs/${name}.md): ${shorten(summary(text), 200)}`),
    '',
    '## Machine-readable',
    '',
    `- [MCP map](${site}/mcp.json): the MCP endpoints and the plain-HTTP tools with their input schemas (also at ${site}/.well-known/mcp.json)`,
    `- [MCP server](${site}/mcp): svc_knowledge_search, svc_knowledge_context, svc_models, svc_research_status, svc_chat_completion`,
    `- [Graph MCP server](${origins.graph}/mcp): the knowledge as a graph`,
    `- [Agent quickstart](${site}/agent-quickstart.md): the agent procedure with this deployment's URLs`,
    `- [Control-plane profile](${api}/v1/control-plane): hosts, wires, auth per route class, versions`,
    `- [Security services](${api}/v1/security/services): tasks, models, what each needs`,
    `- [Models](${api}/v1/models), [knowledge search](${api}/v1/knowledge/search?q=sql%20injection), [knowledge context](${api}/v1/knowledge/context?id=CWE-89)`,
    '',
    '## Optional',
    '',
    `- [Full docs](${site}/llms-full.txt): README and every doc in one Markdown file`,
    '',
  ].join('\n');

  const full =
    [`<!-- source: README.md -->\n\n${readme.trim()}`, ...[...docs].map(([name, text]) => `<!-- source: docs/${name}.md -->\n\n${text.trim()}`)].join(
      '\n\n---\n\n',
    ) + '\n';

  const procedure = section(docs.get('agents') ?? '', 'Agent procedure');
  if (!procedure) throw new Error('docs/agents.md has no "## Agent procedure" section; /agent-quickstart.md is generated from it');
  const quickstart = [
    '# Agent quickstart',
    '',
    `This deployment: API ${api}, MCP ${site}/mcp, graph MCP ${origins.graph}/mcp, sign-in ${origins.auth}, console ${origins.console}.`,
    `Generated from docs/agents.md; the machine-readable map is ${site}/mcp.json.`,
    '',
    procedure,
    '',
  ].join('\n');

  return {
    llmsTxt: doc(llms, 'text/markdown; charset=utf-8'),
    llmsFullTxt: doc(full, 'text/markdown; charset=utf-8'),
    quickstart: doc(quickstart, 'text/markdown; charset=utf-8'),
    docs: new Map([...docs].map(([name, text]) => [name, doc(text, 'text/markdown; charset=utf-8')])),
  };
}
