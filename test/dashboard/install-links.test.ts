// The Connect page's one-click installs for the all-in-one endpoint (web/src/installLinks.ts):
// Cursor's deeplink carries the server's JSON in base64, VS Code's link the `code --add-mcp` JSON
// URL-encoded, both for {base}/mcp with the key kept out of the link; the claude mcp add line sends
// the key (or the variable holding it) in x-api-key.
import { describe, expect, it } from 'vitest';
import { KEY_ENV } from '../../web/src/clientConfig.ts';
import { installLinks } from '../../web/src/installLinks.ts';

const BASE = 'https://mcp.example.com/';
const URL_ = 'https://mcp.example.com/mcp';
const KEY = 'cmcp_0123456789abcdefghijklmnopqrstuvWXYZ12';

describe('install links for the all-in-one URL', () => {
  const links = installLinks(BASE, KEY);

  it('names the one URL and its discovery mode', () => {
    expect(links.url).toBe(URL_);
    expect(links.discoveryUrl).toBe(`${URL_}/discover`);
  });

  it('Cursor: cursor://anysphere.cursor-deeplink/mcp/install?name=…&config=<base64 of { url, headers }>', () => {
    const link = new URL(links.cursor);
    expect(`${link.protocol}//${link.host}${link.pathname}`).toBe('cursor://anysphere.cursor-deeplink/mcp/install');
    expect(link.searchParams.get('name')).toBe('cryptomcp');
    const config = JSON.parse(Buffer.from(link.searchParams.get('config')!, 'base64').toString('utf8')) as unknown;
    expect(config).toEqual({ url: URL_, headers: { 'x-api-key': `\${env:${KEY_ENV}}` } });
    expect(links.cursor).not.toContain(KEY);
  });

  it('VS Code: vscode:mcp/install?<URL-encoded --add-mcp JSON>, the key asked for through an input', () => {
    expect(links.vscode.startsWith('vscode:mcp/install?')).toBe(true);
    const config = JSON.parse(decodeURIComponent(links.vscode.slice('vscode:mcp/install?'.length))) as unknown;
    expect(config).toEqual({
      name: 'cryptomcp',
      type: 'http',
      url: URL_,
      headers: { 'x-api-key': '${input:cryptomcp-api-key}' },
      inputs: [{ type: 'promptString', id: 'cryptomcp-api-key', description: 'cryptomcp API key', password: true }],
    });
    expect(links.vscode).not.toContain(KEY);
    // Nothing in the query is left raw that a URL handler could split on.
    expect(links.vscode.slice('vscode:mcp/install?'.length)).not.toMatch(/[&#{}" ]/);
  });

  it('claude mcp add --transport http with the x-api-key header: the key, or the variable without one', () => {
    expect(links.claudeCode).toBe(`claude mcp add --transport http cryptomcp ${URL_} --header "x-api-key: ${KEY}"`);
    expect(installLinks(BASE, undefined).claudeCode).toBe(`claude mcp add --transport http cryptomcp ${URL_} --header "x-api-key: $${KEY_ENV}"`);
  });
});
