// Quick start: pick a server and a tool, get a curl command and an SDK program filled with your
// key, and the server's tool catalog with each tool's cost and input schema (from /v1/catalog).
import { useEffect, useState } from 'react';
import { describeError, fetchCatalog, type Catalog, type DashboardConfig } from '../api.ts';
import { KEY_ENV } from '../clientConfig.ts';
import { exampleArguments, quickStartSnippets, starterTool } from '../quickStart.ts';
import { CopyButton } from './CopyButton.tsx';
import type { NewKey } from './KeysPage.tsx';

const KEY_FORMAT = /^cmcp_[0-9A-Za-z]{38}$/;

function credits(n: number): string {
  return n === 0 ? 'free' : `${n} credit${n === 1 ? '' : 's'}`;
}

export function QuickStartPage({ config, newKey }: { config: DashboardConfig; newKey: NewKey | undefined }) {
  const [catalog, setCatalog] = useState<Catalog>();
  const [error, setError] = useState<string>();
  const [server, setServer] = useState(newKey?.servers?.[0] ?? config.servers[0]?.name ?? '');
  // '' until one is picked: the server's starter tool, a real data call (quickStart.ts).
  const [tool, setTool] = useState('');
  const [pasted, setPasted] = useState('');
  useEffect(() => {
    fetchCatalog().then(setCatalog, (err: unknown) => setError(describeError(err)));
  }, []);

  const entry = catalog?.servers.find((s) => s.name === server);
  const chosen = entry?.tools.find((t) => t.name === tool) ?? (entry ? starterTool(entry.tools) : undefined);
  const key = newKey?.plaintext ?? (KEY_FORMAT.test(pasted.trim()) ? pasted.trim() : undefined);
  const snippets = chosen ? quickStartSnippets(config.mcp_base_url, server, chosen.name, exampleArguments(chosen.input_schema), key) : undefined;

  return (
    <>
      <p>Three steps to a first call: a key, a tool, and one of the snippets below in a terminal or a script.</p>
      <section className="card" aria-labelledby="qs-key">
        <h2 id="qs-key">1. Your key</h2>
        {newKey ? (
          <p>
            The snippets use your new key “{newKey.name}”. It is shown only while this page stays open: keep it somewhere safe.
          </p>
        ) : (
          <>
            <p>
              Keys are shown once, when created on the API keys page. Paste yours here to fill in the snippets (it stays in this page), or set{' '}
              <code>{KEY_ENV}</code>.
            </p>
            <label>
              API key
              <input value={pasted} onChange={(e) => setPasted(e.target.value)} autoComplete="off" spellCheck={false} placeholder="cmcp_…" aria-describedby="qs-key-hint" />
              <span id="qs-key-hint" className="hint">
                {pasted && !key ? 'That does not look like a cryptomcp key: it starts with cmcp_ and has 43 characters.' : 'Optional.'}
              </span>
            </label>
          </>
        )}
      </section>

      <section className="card" aria-labelledby="qs-tool">
        <h2 id="qs-tool">2. A server and a tool</h2>
        {error && <p role="alert" className="error">The tool catalog could not load: {error}</p>}
        {!catalog && !error && <p className="muted" aria-live="polite">Loading the tool catalog…</p>}
        {catalog && (
          <div className="grid2">
            <label>
              Server
              <select
                value={server}
                onChange={(e) => {
                  setServer(e.target.value);
                  setTool('');
                }}
              >
                {catalog.servers.map((s) => (
                  <option key={s.name} value={s.name}>{s.name}</option>
                ))}
              </select>
            </label>
            <label>
              Tool
              <select value={chosen?.name ?? ''} onChange={(e) => setTool(e.target.value)}>
                {entry?.tools.map((t) => (
                  <option key={t.name} value={t.name}>{`${t.name} (${credits(t.credits)})`}</option>
                ))}
              </select>
            </label>
          </div>
        )}
        {chosen && (
          <p data-testid="qs-tool-cost">
            <strong>{chosen.name}</strong> costs {credits(chosen.credits)} per successful call. {chosen.description}
          </p>
        )}
      </section>

      {snippets && (
        <section className="card" aria-labelledby="qs-call">
          <h2 id="qs-call">3. Call it</h2>
          <h3>curl</h3>
          <pre data-testid="qs-curl" tabIndex={0}><code>{snippets.curl}</code></pre>
          <CopyButton text={snippets.curl} label="Copy curl command" />
          <h3>TypeScript (MCP SDK)</h3>
          <pre data-testid="qs-sdk" tabIndex={0}><code>{snippets.sdk}</code></pre>
          <CopyButton text={snippets.sdk} label="Copy SDK program" />
          <p className="hint">Every answer carries its request id (x-request-id) and the credits used and left; a failed call costs nothing.</p>
        </section>
      )}

      {entry && (
        <section aria-labelledby="qs-catalog">
          <h2 id="qs-catalog">Tools of {entry.name}</h2>
          <p>{entry.description}</p>
          <div className="table-wrap">
            <table className="responsive" data-testid="qs-catalog">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col" className="num">Cost</th>
                  <th scope="col">What it returns</th>
                </tr>
              </thead>
              <tbody>
                {entry.tools.map((t) => (
                  <tr key={t.name}>
                    <td data-label="Tool"><code>{t.name}</code></td>
                    <td data-label="Cost" className="num">{credits(t.credits)}</td>
                    <td data-label="Returns" className="wrap">
                      <div>
                        {t.description}
                        <details>
                          <summary>Input schema</summary>
                          <pre tabIndex={0}><code>{JSON.stringify(t.input_schema, null, 2)}</code></pre>
                        </details>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}
