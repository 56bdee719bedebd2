// Copy-ready MCP client configurations for the Connect page: one entry per chosen server, each at
// {base}/mcp/{server} with the key in the x-api-key header. Where a client can read the key from
// an environment variable (Claude Code, Cursor, mcp-remote) or prompt for it (VS Code), the file
// holds a reference instead of the key, so it can be committed or shared safely.

export const KEY_ENV = 'CRYPTOMCP_API_KEY';
export const KEY_SLOT = '<YOUR_API_KEY>';

export type ClientId = 'desktop' | 'editor' | 'claude-code' | 'cursor' | 'vscode' | 'mcp-remote';

export interface ClientConfig {
  id: ClientId;
  title: string;
  /** Where the snippet goes. */
  file: string;
  /** Whether the key itself appears in the snippet (otherwise an env var or prompt supplies it). */
  inlineKey: boolean;
  note: string;
  json: unknown;
}

export function serverUrl(baseUrl: string, server: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/mcp/${server}`;
}

const label = (server: string) => `cryptomcp-${server}`;

export function clientConfigs(baseUrl: string, servers: string[], key: string | undefined): ClientConfig[] {
  const k = key ?? KEY_SLOT;
  const each = <T,>(make: (url: string) => T): Record<string, T> =>
    Object.fromEntries(servers.map((s) => [label(s), make(serverUrl(baseUrl, s))]));
  return [
    {
      id: 'desktop',
      title: 'Desktop assistant',
      file: 'the assistant’s MCP settings (e.g. claude_desktop_config.json)',
      inlineKey: true,
      note: 'Desktop assistants read the key from the file: keep the file private.',
      json: { mcpServers: each((url) => ({ url, transport: 'http', headers: { 'x-api-key': k } })) },
    },
    {
      id: 'editor',
      title: 'Code editor',
      file: 'the editor’s settings (mcp → servers)',
      inlineKey: true,
      note: 'The shape code editors with an "mcp" settings block use.',
      json: { mcp: { servers: each((url) => ({ url, transport: 'http', headers: { 'x-api-key': k } })) } },
    },
    {
      id: 'claude-code',
      title: 'Claude Code',
      file: '.mcp.json in your project',
      inlineKey: false,
      note: `Claude Code expands \${${KEY_ENV}} from your environment: export ${KEY_ENV}=… before starting it.`,
      json: { mcpServers: each((url) => ({ type: 'http', url, headers: { 'x-api-key': `\${${KEY_ENV}}` } })) },
    },
    {
      id: 'cursor',
      title: 'Cursor',
      file: '.cursor/mcp.json (project) or ~/.cursor/mcp.json',
      inlineKey: false,
      note: `Cursor reads \${env:${KEY_ENV}} from the environment it was started in.`,
      json: { mcpServers: each((url) => ({ url, headers: { 'x-api-key': `\${env:${KEY_ENV}}` } })) },
    },
    {
      id: 'vscode',
      title: 'VS Code',
      file: '.vscode/mcp.json',
      inlineKey: false,
      note: 'VS Code asks for the key once and stores it in its secret storage.',
      json: {
        inputs: [{ type: 'promptString', id: 'cryptomcp-api-key', description: 'cryptomcp API key', password: true }],
        servers: each((url) => ({ type: 'http', url, headers: { 'x-api-key': '${input:cryptomcp-api-key}' } })),
      },
    },
    {
      id: 'mcp-remote',
      title: 'stdio-only clients (mcp-remote)',
      file: 'the client’s MCP settings',
      inlineKey: true,
      note: 'mcp-remote bridges stdio to HTTP; the key sits in env, passed as a header without spaces.',
      json: {
        mcpServers: each((url) => ({
          command: 'npx',
          args: ['-y', 'mcp-remote', url, '--header', `x-api-key:\${${KEY_ENV}}`],
          env: { [KEY_ENV]: k },
        })),
      },
    },
  ];
}
