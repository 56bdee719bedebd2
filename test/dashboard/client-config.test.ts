// The Connect page's client configurations (web/src/clientConfig.ts): every shape the issue names,
// one entry per chosen server at {base}/mcp/{server}, the key in x-api-key, and the key kept out
// of the file (env var or prompt) where the client supports it.
import { describe, expect, it } from 'vitest';
import { clientConfigs, KEY_ENV, KEY_SLOT } from '../../web/src/clientConfig.ts';

const BASE = 'https://mcp.example.com/';
const KEY = 'cmcp_0123456789abcdefghijklmnopqrstuvWXYZ12';

describe('client configurations', () => {
  const configs = Object.fromEntries(clientConfigs(BASE, ['market-intelligence', 'whale-intelligence'], KEY).map((c) => [c.id, c]));
  const url = (s: string) => `https://mcp.example.com/mcp/${s}`;

  it('generic mcpServers shape (relabelled from "desktop assistant"): mcpServers → label → url, transport "http", headers.x-api-key', () => {
    expect(configs.desktop!.json).toEqual({
      mcpServers: {
        'cryptomcp-market-intelligence': { url: url('market-intelligence'), transport: 'http', headers: { 'x-api-key': KEY } },
        'cryptomcp-whale-intelligence': { url: url('whale-intelligence'), transport: 'http', headers: { 'x-api-key': KEY } },
      },
    });
  });

  it('code editor: mcp → servers → label → the same fields', () => {
    expect((configs.editor!.json as { mcp: { servers: Record<string, unknown> } }).mcp.servers['cryptomcp-whale-intelligence']).toEqual({
      url: url('whale-intelligence'),
      transport: 'http',
      headers: { 'x-api-key': KEY },
    });
  });

  it('Claude Code .mcp.json: type "http" and the key from the environment', () => {
    expect(configs['claude-code']!.json).toMatchObject({
      mcpServers: { 'cryptomcp-market-intelligence': { type: 'http', url: url('market-intelligence'), headers: { 'x-api-key': `\${${KEY_ENV}}` } } },
    });
    expect(JSON.stringify(configs['claude-code']!.json)).not.toContain(KEY);
  });

  it('Cursor reads ${env:…}; VS Code prompts through inputs and keeps the key out of the file', () => {
    expect(JSON.stringify(configs.cursor!.json)).toContain(`\${env:${KEY_ENV}}`);
    expect(JSON.stringify(configs.cursor!.json)).not.toContain(KEY);
    const vscode = configs.vscode!.json as { inputs: { id: string; password: boolean }[]; servers: Record<string, { type: string; headers: Record<string, string> }> };
    expect(vscode.inputs).toEqual([expect.objectContaining({ type: 'promptString', id: 'cryptomcp-api-key', password: true })]);
    expect(vscode.servers['cryptomcp-market-intelligence']).toMatchObject({ type: 'http', headers: { 'x-api-key': '${input:cryptomcp-api-key}' } });
    expect(JSON.stringify(vscode)).not.toContain(KEY);
  });

  it('mcp-remote for stdio-only clients: npx mcp-remote <url> --header x-api-key:${VAR} with the key in env', () => {
    expect((configs['mcp-remote']!.json as { mcpServers: Record<string, unknown> }).mcpServers['cryptomcp-market-intelligence']).toEqual({
      command: 'npx',
      args: ['-y', 'mcp-remote', url('market-intelligence'), '--header', `x-api-key:\${${KEY_ENV}}`],
      env: { [KEY_ENV]: KEY },
    });
  });

  it('connectors (claude.ai / Claude Desktop, ChatGPT) get the server URLs alone, and sign in with OAuth', () => {
    for (const id of ['connector', 'chatgpt'] as const) {
      expect(configs[id]!).toMatchObject({ oauth: true, inlineKey: false, text: `${url('market-intelligence')}\n${url('whale-intelligence')}` });
      expect(configs[id]!.json).toBeUndefined();
    }
  });

  it('the Claude Code one-liner: claude mcp add --transport http <name> <url>, no key', () => {
    expect(configs['claude-code-oauth']!.text).toBe(
      [
        `claude mcp add --transport http cryptomcp-market-intelligence ${url('market-intelligence')}`,
        `claude mcp add --transport http cryptomcp-whale-intelligence ${url('whale-intelligence')}`,
      ].join('\n'),
    );
    expect(configs['claude-code-oauth']!.text).not.toContain(KEY);
  });

  it('without a key the snippets hold a slot to paste it into', () => {
    const noKey = clientConfigs(BASE, ['market-intelligence'], undefined);
    expect(JSON.stringify(noKey.find((c) => c.id === 'desktop')!.json)).toContain(KEY_SLOT);
  });
});
