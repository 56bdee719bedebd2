// Copy-ready MCP client configurations for the Connect page: one entry per chosen server, each at
// {base}/mcp/{server}. Connectors (claude.ai, Claude Desktop, ChatGPT) and the Claude Code
// one-liner take the URL alone and sign in with OAuth (the wallet approves on a consent page).
// The rest put the key in the x-api-key header; where a client can read it from an environment
// variable (Claude Code, Cursor, mcp-remote) or prompt for it (VS Code), the file holds a reference
// instead of the key, so it can be committed or shared safely.

export const KEY_ENV = 'CRYPTOMCP_API_KEY';
export const KEY_SLOT = '<YOUR_API_KEY>';

export type ClientId = 'connector' | 'chatgpt' | 'claude-code-oauth' | 'desktop' | 'editor' | 'claude-code' | 'cursor' | 'vscode' | 'mcp-remote';

export interface ClientConfig {
  id: ClientId;
  title: string;
  /** Where the snippet goes. */
  file: string;
  /** Whether the key itself appears in the snippet (otherwise an env var, a prompt or OAuth supplies it). */
  inlineKey: boolean;
  /** Signs in with OAuth (no key at all). */
  oauth: boolean;
  note: string;
  /** A JSON configuration, or (for URLs and command lines) the text to paste. */
  json?: unknown;
  text?: string;
}

export function serverUrl(baseUrl: string, server: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/mcp/${server}`;
}

const label = (server: string) => `cryptomcp-${server}`;

export function clientConfigs(baseUrl: string, servers: string[], key: string | undefined): ClientConfig[] {
  const k = key ?? KEY_SLOT;
  const each = <T,>(make: (url: string) => T): Record<string, T> =>
    Object.fromEntries(servers.map((s) => [label(s), make(serverUrl(baseUrl, s))]));
  const urls = servers.map((s) => serverUrl(baseUrl, s)).join('\n');
  return [
    {
      id: 'connector',
      title: 'claude.ai / Claude Desktop',
      file: 'Settings → Connectors → Add custom connector, as the remote MCP server URL (one connector per server)',
      inlineKey: false,
      oauth: true,
      note: 'Nothing else is needed: when you connect, a cryptomcp page opens where you sign in with your wallet, choose the servers and approve.',
      text: urls,
    },
    {
      id: 'chatgpt',
      title: 'ChatGPT',
      file: 'Settings → Apps & Connectors → Create (developer mode), as the MCP server URL, with OAuth authentication',
      inlineKey: false,
      oauth: true,
      note: 'ChatGPT registers itself and sends you to cryptomcp to sign in with your wallet and approve.',
      text: urls,
    },
    {
      id: 'claude-code-oauth',
      title: 'claude mcp add (OAuth)',
      file: 'a terminal',
      inlineKey: false,
      oauth: true,
      note: 'Then run /mcp in Claude Code and choose Authenticate: your browser opens the wallet sign-in and consent.',
      text: servers.map((s) => `claude mcp add --transport http ${label(s)} ${serverUrl(baseUrl, s)}`).join('\n'),
    },
    {
      id: 'desktop',
      title: 'mcpServers (url + header)',
      file: 'the MCP settings of a client that reads this generic shape (url and headers)',
      inlineKey: true,
      oauth: false,
      note:
        'A generic shape many clients read; Claude Desktop’s config file does not (it only starts local commands): there, add a connector, or use mcp-remote. Keep the file private: it holds the key.',
      json: { mcpServers: each((url) => ({ url, transport: 'http', headers: { 'x-api-key': k } })) },
    },
    {
      id: 'editor',
      title: 'Code editor',
      file: 'the editor’s settings (mcp → servers)',
      inlineKey: true,
      oauth: false,
      note: 'The shape code editors with an "mcp" settings block use.',
      json: { mcp: { servers: each((url) => ({ url, transport: 'http', headers: { 'x-api-key': k } })) } },
    },
    {
      id: 'claude-code',
      title: 'Claude Code',
      file: '.mcp.json in your project',
      inlineKey: false,
      oauth: false,
      note: `Claude Code expands \${${KEY_ENV}} from your environment: export ${KEY_ENV}=… before starting it.`,
      json: { mcpServers: each((url) => ({ type: 'http', url, headers: { 'x-api-key': `\${${KEY_ENV}}` } })) },
    },
    {
      id: 'cursor',
      title: 'Cursor',
      file: '.cursor/mcp.json (project) or ~/.cursor/mcp.json',
      inlineKey: false,
      oauth: false,
      note: `Cursor reads \${env:${KEY_ENV}} from the environment it was started in.`,
      json: { mcpServers: each((url) => ({ url, headers: { 'x-api-key': `\${env:${KEY_ENV}}` } })) },
    },
    {
      id: 'vscode',
      title: 'VS Code',
      file: '.vscode/mcp.json',
      inlineKey: false,
      oauth: false,
      note: 'VS Code asks for the key once and stores it in its secret storage.',
      json: {
        inputs: [{ type: 'promptString', id: 'cryptomcp-api-key', description: 'cryptomcp API key', password: true }],
        servers: each((url) => ({ type: 'http', url, headers: { 'x-api-key': '${input:cryptomcp-api-key}' } })),
      },
    },
    {
      id: 'mcp-remote',
      title: 'stdio-only apps (mcp-remote)',
      file: 'the MCP settings of a desktop app that only starts local commands (e.g. claude_desktop_config.json)',
      inlineKey: true,
      oauth: false,
      note: 'mcp-remote bridges stdio to HTTP; the key sits in env, passed as a header without spaces. Without --header, mcp-remote signs in with OAuth instead (your browser opens the wallet consent).',
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
