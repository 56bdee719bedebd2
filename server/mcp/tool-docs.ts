// docs/tools.md, written from the registry: every server, every tool with its title, cost,
// description and arguments (from its JSON Schema). `npm run docs:tools` writes the file;
// test/mcp/tool-docs.test.ts fails when it drifts from the code.
import { taskSentence, type Registry } from './registry.ts';

interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' \\| ');
  if (s.type === 'array') return `${s.items ? typeOf(s.items) : 'any'}[]`;
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  return s.type ?? 'any';
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function bounds(s: JsonSchema): string {
  const parts: string[] = [];
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  else if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  return parts.join(', ');
}

export function renderToolDocs(registry: Registry): string {
  const servers = [...registry.values()];
  const total = servers.reduce((n, s) => n + s.tools.size, 0);
  const out: string[] = [
    '# Tools',
    '',
    `Generated from the tool registry by \`npm run docs:tools\`; do not edit. ${servers.length} servers, ${total} tools.`,
    'Costs are in credits per successful call at the default prices (an operator may override them:',
    '`/v1/catalog` and `tools/list` always show the effective cost). A call that fails, or answers',
    'with no data for what was asked, costs nothing. Tools marked as tasks may run as MCP tasks:',
    'answered at once, polled to their result ([tasks](tasks.md)).',
    '',
    ...servers.map((s) => `- [${s.name}](#${s.name}): ${s.description}`),
    '',
  ];
  for (const s of servers) {
    out.push(`## ${s.name}`, '', s.description, '', '| tool | credits | what it answers |', '|---|---:|---|');
    for (const t of s.tools.values()) out.push(`| [\`${t.name}\`](#${s.name}-${t.name.replace(/_/g, '-')}) | ${t.credits} | ${cell(t.listing.title ?? t.name)} |`);
    out.push('');
    for (const t of s.tools.values()) {
      out.push(`### ${s.name}: ${t.name}`, '', `<a id="${s.name}-${t.name.replace(/_/g, '-')}"></a>`, '');
      out.push(`**${t.listing.title ?? t.name}** — ${t.credits} credit${t.credits === 1 ? '' : 's'}.`, '', t.definition.description.trim(), '');
      if (t.definition.longRunning === true) out.push(`${taskSentence()} See [tasks](tasks.md).`, '');
      const schema = t.inputSchema as JsonSchema;
      const props = Object.entries(schema.properties ?? {});
      if (props.length === 0) {
        out.push('No arguments.', '');
        continue;
      }
      const required = new Set(schema.required ?? []);
      out.push('| argument | type | required | notes |', '|---|---|---|---|');
      for (const [name, p] of props) {
        const notes = [p.description ?? '', bounds(p)].filter(Boolean).join(' ');
        out.push(`| \`${name}\` | ${typeOf(p)} | ${required.has(name) ? 'yes' : 'no'} | ${cell(notes)} |`);
      }
      out.push('');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
