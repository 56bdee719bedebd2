// Copy-ready client configurations for the chosen servers and key.
import { useState } from 'react';
import type { DashboardConfig } from '../api.ts';
import { clientConfigs, KEY_ENV, type ClientId } from '../clientConfig.ts';
import { installLinks } from '../installLinks.ts';
import { CopyButton } from './CopyButton.tsx';
import type { NewKey } from './KeysPage.tsx';

/** An address only this machine (or its network) reaches: no cloud connector can call it. */
function notPublic(baseUrl: string): boolean {
  const { protocol, hostname } = new URL(baseUrl);
  const local = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0|10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2})$/;
  return protocol !== 'https:' || local.test(hostname) || hostname.endsWith('.local');
}

export function ConnectPage({ config, newKey }: { config: DashboardConfig; newKey: NewKey | undefined }) {
  const all = config.servers.map((s) => s.name);
  const [servers, setServers] = useState<string[]>(newKey?.servers ?? all);
  const [useNewKey, setUseNewKey] = useState(newKey !== undefined);
  const [client, setClient] = useState<ClientId>('desktop');
  const configs = clientConfigs(config.mcp_base_url, servers, useNewKey ? newKey?.plaintext : undefined);
  const chosen = configs.find((c) => c.id === client) ?? configs[0]!;
  const text = chosen.text ?? JSON.stringify(chosen.json, null, 2);
  const links = installLinks(config.mcp_base_url, useNewKey ? newKey?.plaintext : undefined);

  return (
    <>
      {notPublic(config.mcp_base_url) && (
        <p className="card notice" data-testid="local-url-note">
          This service answers at <code>{config.mcp_base_url}</code>, which only this machine or its network reaches. Cloud connectors (claude.ai,
          ChatGPT) call from their own servers and need a public https URL: put the service behind one (and set PUBLIC_BASE_URL) to use them. Clients
          on this machine (Claude Desktop, Claude Code, Cursor, VS Code) can use the addresses below as they are.
        </p>
      )}
      <section className="card" aria-labelledby="one-url">
        <h2 id="one-url">Every server at one URL</h2>
        <p>
          <code data-testid="all-in-one-url">{links.url}</code> <CopyButton text={links.url} label="Copy URL" />
        </p>
        <p>
          It offers the tools of every server your key (or connection) may use. Connectors (claude.ai, Claude Desktop, ChatGPT) need only this URL:
          they sign in with OAuth and you approve once with your wallet.
        </p>
        <p className="install">
          <a className="button" href={links.cursor}>Add to Cursor</a> <a className="button" href={links.vscode}>Add to VS Code</a>
        </p>
        <p className="muted">
          Cursor reads the key from {KEY_ENV} in its environment; VS Code asks for it once and keeps it in its secret storage.
        </p>
        <pre data-testid="claude-code-add" tabIndex={0}><code>{links.claudeCode}</code></pre>
        <CopyButton text={links.claudeCode} label="Copy command" />
        <p className="muted">
          Clients that pay for every tool definition in their context can use the discovery mode, <code>{links.discoveryUrl}</code>: it lists only
          find_tools, describe_tool and call_tool, and each call is charged as the tool it runs.
        </p>
      </section>
      <h2>One server at a time</h2>
      <p>
        Each server lives at <code>{config.mcp_base_url}/mcp/&lt;server&gt;</code>. Connectors (claude.ai, Claude Desktop, ChatGPT) need only that
        URL: they sign in with OAuth, and you approve with your wallet (see Connected apps). Other clients send your key in the{' '}
        <code>x-api-key</code> header.
      </p>
      <section className="card">
        <fieldset className="servers">
          <legend>Servers</legend>
          {all.map((s) => (
            <label key={s} className="check">
              <input type="checkbox" checked={servers.includes(s)} onChange={(e) => setServers(e.target.checked ? [...servers, s] : servers.filter((x) => x !== s))} />
              {s}
            </label>
          ))}
        </fieldset>
        {chosen.oauth ? (
          <p className="muted">This client signs in with your wallet: no key needed.</p>
        ) : newKey ? (
          <label className="check">
            <input type="checkbox" checked={useNewKey} onChange={(e) => setUseNewKey(e.target.checked)} />
            <span>Fill in my new key “{newKey.name}” where the file holds the key</span>
          </label>
        ) : (
          <p className="muted">Keys are shown only when created: paste yours where the snippet says &lt;YOUR_API_KEY&gt;, or set {KEY_ENV}.</p>
        )}
      </section>

      <div role="tablist" aria-label="MCP client" className="tabs">
        {configs.map((c) => (
          <button
            key={c.id}
            role="tab"
            id={`tab-${c.id}`}
            aria-selected={c.id === client}
            aria-controls="client-panel"
            tabIndex={c.id === client ? 0 : -1}
            onClick={() => setClient(c.id)}
            onKeyDown={(e) => {
              const i = configs.findIndex((x) => x.id === client);
              const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
              if (step) {
                const next = configs[(i + step + configs.length) % configs.length]!;
                setClient(next.id);
                document.getElementById(`tab-${next.id}`)?.focus();
              }
            }}
          >
            {c.title}
          </button>
        ))}
      </div>
      <section id="client-panel" role="tabpanel" aria-labelledby={`tab-${chosen.id}`} className="card">
        <p>
          Put this in <strong>{chosen.file}</strong>. {chosen.note}
        </p>
        {servers.length === 0 ? (
          <p className="error">Choose at least one server.</p>
        ) : (
          <>
            <pre data-testid="client-config" tabIndex={0}><code>{text}</code></pre>
            <CopyButton text={text} label="Copy configuration" />
          </>
        )}
      </section>
    </>
  );
}
