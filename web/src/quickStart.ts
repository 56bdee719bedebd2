// The Quick start view's snippets: a curl command and an MCP TypeScript SDK program that call one
// tool with the chosen key, and example arguments read from the tool's input schema (its defaults,
// enums and the `e.g. "…"` examples the descriptions give), so the first call is one paste away.
import { KEY_SLOT, serverUrl } from './clientConfig.ts';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  default?: unknown;
  examples?: unknown[];
  description?: string;
  minimum?: number;
  minItems?: number;
}

/** A value that satisfies one property: its default, first example or enum value, else one made from its type. */
export function exampleValue(schema: JsonSchema | undefined): unknown {
  if (!schema) return null;
  if (schema.default !== undefined) return schema.default;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.enum?.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const example = /e\.g\.,? ?"([^"]+)"/.exec(schema.description ?? '')?.[1];
  switch (type) {
    case 'string':
      return example ?? '';
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [exampleValue({ ...schema.items, description: schema.items?.description ?? schema.description })];
    case 'object':
      return exampleArguments(schema);
    default:
      return example ?? null;
  }
}

/** Arguments for a tools/call: the required properties only (the others take their defaults). */
export function exampleArguments(schema: unknown): Record<string, unknown> {
  const s = (schema ?? {}) as JsonSchema;
  const args: Record<string, unknown> = {};
  for (const name of s.required ?? []) args[name] = exampleValue(s.properties?.[name]);
  return args;
}

export interface Snippets {
  curl: string;
  sdk: string;
}

/** curl and SDK snippets for one tools/call; without a key they hold the key slot. */
export function quickStartSnippets(baseUrl: string, server: string, tool: string, args: Record<string, unknown>, key: string | undefined): Snippets {
  const url = serverUrl(baseUrl, server);
  const k = key ?? KEY_SLOT;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } });
  const curl = [
    `curl -s ${url} \\`,
    `  -H 'x-api-key: ${k}' \\`,
    `  -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\`,
    `  -d '${body.replaceAll("'", "'\\''")}'`,
  ].join('\n');
  const sdk = [
    `// npm install @modelcontextprotocol/client`,
    `import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';`,
    ``,
    `const client = new Client({ name: 'my-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });`,
    `await client.connect(new StreamableHTTPClientTransport(new URL('${url}'), {`,
    `  requestInit: { headers: { 'x-api-key': ${key ? `'${k}'` : 'process.env.CRYPTOMCP_API_KEY!'} } },`,
    `}));`,
    `const result = await client.callTool({ name: '${tool}', arguments: ${JSON.stringify(args)} });`,
    `console.log(result.structuredContent);`,
    `await client.close();`,
  ].join('\n');
  return { curl, sdk };
}

/** Something example arguments can stand for: a value that is not empty (nor a list of empties). */
function filled(value: unknown): boolean {
  if (value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0 && value.every(filled);
  return true;
}

/**
 * The tool Quick start offers first: a real data call, not a free metadata one — the cheapest paid
 * tool whose required arguments all have example values (catalog order breaks ties); a server
 * with no such tool offers its first tool.
 */
export function starterTool<T extends { name: string; credits: number; input_schema: unknown }>(tools: readonly T[]): T | undefined {
  const ready = tools.filter((t) => t.credits > 0 && Object.values(exampleArguments(t.input_schema)).every(filled));
  return ready.reduce<T | undefined>((best, t) => (best === undefined || t.credits < best.credits ? t : best), undefined) ?? tools[0];
}
