// The Connect page's one-click installs for the all-in-one endpoint ({base}/mcp, every server the
// key may use at one URL): a Cursor deeplink, a VS Code install link and the `claude mcp add` line.
// The links keep the key out of the URL (Cursor reads it from the environment, VS Code prompts for
// it once); the command line, which the user runs themselves, holds it or the variable that does.
import { KEY_ENV } from './clientConfig.ts';

/** The name the installed server gets in each client. */
export const INSTALL_NAME = 'cryptomcp';

export function allInOneUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/mcp`;
}

/** The all-in-one endpoint's discovery mode: three meta-tools instead of every tool definition. */
export function discoveryUrl(baseUrl: string): string {
  return `${allInOneUrl(baseUrl)}/discover`;
}

export interface InstallLinks {
  url: string;
  discoveryUrl: string;
  /** cursor://anysphere.cursor-deeplink/mcp/install?name=…&config=<base64 of the server's JSON>. */
  cursor: string;
  /** vscode:mcp/install?<URL-encoded JSON in the shape of `code --add-mcp`>. */
  vscode: string;
  /** claude mcp add --transport http … with the x-api-key header. */
  claudeCode: string;
}

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

export function installLinks(baseUrl: string, key: string | undefined): InstallLinks {
  const url = allInOneUrl(baseUrl);
  const cursorConfig = { url, headers: { 'x-api-key': `\${env:${KEY_ENV}}` } };
  const vscodeConfig = {
    name: INSTALL_NAME,
    type: 'http',
    url,
    headers: { 'x-api-key': '${input:cryptomcp-api-key}' },
    inputs: [{ type: 'promptString', id: 'cryptomcp-api-key', description: 'cryptomcp API key', password: true }],
  };
  return {
    url,
    discoveryUrl: discoveryUrl(baseUrl),
    cursor: `cursor://anysphere.cursor-deeplink/mcp/install?name=${encodeURIComponent(INSTALL_NAME)}&config=${encodeURIComponent(base64(JSON.stringify(cursorConfig)))}`,
    vscode: `vscode:mcp/install?${encodeURIComponent(JSON.stringify(vscodeConfig))}`,
    claudeCode: `claude mcp add --transport http ${INSTALL_NAME} ${url} --header "x-api-key: ${key ?? `$${KEY_ENV}`}"`,
  };
}
