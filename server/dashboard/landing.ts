// The public page at `/`: what the product is, the nine servers, the plans and credit packs in
// dollars and what each tool costs, rendered on the server so it reads in the first round trip and
// with JavaScript off (the dashboard at /app needs a wallet before it shows a price). Everything on
// it comes from the same sources /v1/catalog answers from: the registry, the plans table, the
// payment settings and the configured origin (never the request's Host).
import type { Plan } from '../accounts/plans.ts';
import type { CreditPack } from '../config.ts';
import type { Registry } from '../mcp/registry.ts';
import { escapeHtml } from '../lib/text.ts';

export interface LandingInput {
  origin: string;
  registry: Registry;
  plans: Plan[];
  /** What /v1/catalog says about buying (app.ts CatalogPayments); undefined when payments are off. */
  payments: { packs: CreditPack[]; chains: { chain: string }[]; x402: { usd_micros_per_credit: number; path: string } | null } | undefined;
}

/** Text and attribute values: plan names come from PlanPolicy resources, so nothing is trusted. */
export const esc = escapeHtml;

export const dollars = (cents: number): string => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const n = (v: number) => v.toLocaleString('en-US');
/** A table that may scroll sideways on its own on a phone: focusable and named, so keyboards reach it. */
const scrollBox = (label: string, table: string) => `<div class="scroll" tabindex="0" role="region" aria-label="${esc(label)}">${table}</div>`;

/** "1 credit", "3 credits", or "free". */
const cost = (credits: number) => (credits === 0 ? 'free' : `${credits} credit${credits === 1 ? '' : 's'}`);

function planRow(p: Plan): string {
  const price = p.price_cents === null ? (p.renewal === 'one-time' ? 'Free' : 'On request') : `${dollars(p.price_cents)} / month`;
  const credits = `${n(p.credits)} ${p.renewal === 'one-time' ? 'once' : 'a month'}`;
  const perThousand = p.price_cents !== null && p.credits > 0 ? ` <span class="muted">(${dollars((p.price_cents * 1000) / p.credits)} per 1,000)</span>` : '';
  return `<tr><th scope="row">${esc(p.display_name)}</th><td>${price}${perThousand}</td><td>${credits}</td><td>${n(p.requests_per_minute)}/min</td><td>${n(p.max_keys)}</td></tr>`;
}

function serverSection(s: Registry extends Map<string, infer R> ? R : never, origin: string): string {
  const tools = [...s.tools.values()];
  const paid = tools.filter((t) => t.credits > 0).map((t) => t.credits);
  const range = paid.length ? (Math.min(...paid) === Math.max(...paid) ? cost(paid[0]!) : `${Math.min(...paid)}–${Math.max(...paid)} credits`) : 'free';
  const rows = tools
    .map((t) => `<tr><td><code>${esc(t.name)}</code></td><td>${esc(t.listing.title ?? t.name)}</td><td class="num">${cost(t.credits)}</td></tr>`)
    .join('');
  return `<section class="server" aria-labelledby="s-${esc(s.name)}">
<h3 id="s-${esc(s.name)}">${esc(s.title)}</h3>
<p>${esc(s.description)}</p>
<p class="muted">${tools.length} tools, ${range} a call · <code class="url">${esc(origin)}/mcp/${esc(s.name)}</code></p>
<details><summary>Tools and their cost</summary>${scrollBox(`${s.title} tools`, `<table><thead><tr><th scope="col">Tool</th><th scope="col">What</th><th scope="col" class="num">Cost</th></tr></thead><tbody>${rows}</tbody></table>`)}</details>
</section>`;
}

export function landingPage({ origin, registry, plans, payments }: LandingInput): string {
  const servers = [...registry.values()];
  const toolCount = servers.reduce((sum, s) => sum + [...s.tools.values()].filter((t) => t.credits > 0).length, 0);
  const packs = payments?.packs ?? [];
  const x402 = payments?.x402;
  const chains = [...new Set((payments?.chains ?? []).map((c) => c.chain))];
  const packRows = packs
    .map((p) => `<tr><th scope="row">${n(p.credits)} credits</th><td>${dollars(p.price_cents)}</td><td class="muted">${dollars((p.price_cents * 1000) / p.credits)} per 1,000</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cryptomcp: crypto data for AI agents, paid per call in credits</title>
<meta name="description" content="Nine MCP servers of crypto market, on-chain, social and project data at one URL, metered in credits. Plans from free to ${esc(dollars(Math.max(0, ...plans.map((p) => p.price_cents ?? 0))))} a month, paid in USDC.">
<style>
:root{color-scheme:light dark;--fg:#1f2328;--bg:#f6f8fa;--muted:#59636e;--line:#d1d9e0;--accent:#0a58ca;--accent-fg:#fff;--card:#fff;background:var(--bg)}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--accent:#79b8ff;--accent-fg:#0d1117;--card:#161b22}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:68rem;margin:0 auto;padding:1rem}h1{font-size:1.9rem;line-height:1.2;margin:1.5rem 0 .5rem}h2{margin-top:2.5rem}
.muted{color:var(--muted)}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;overflow-wrap:anywhere}
.cta{display:inline-block;background:var(--accent);color:var(--accent-fg);padding:.7rem 1.2rem;border-radius:.4rem;font-weight:600;text-decoration:none}
.cta:focus-visible,a:focus-visible,summary:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
a{color:var(--accent)}.servers{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,20rem),1fr));gap:1rem}
.server{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1rem;min-width:0}.server h3{margin:0 0 .3rem}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
.num{text-align:right;white-space:nowrap}.one-url{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.8rem 1rem}
</style>
</head>
<body>
<main>
<h1>Crypto data for AI agents, one MCP URL, paid per call</h1>
<p>cryptomcp answers AI clients (Claude, ChatGPT, Cursor, VS Code, any MCP client) with crypto prices and forecasts, on-chain activity, token and whale intelligence, social sentiment, KOL track records and DeFi project due diligence: ${servers.length} servers, ${toolCount} paid tools, every answer with its source and the date its data is current to.</p>
<p class="one-url">Connect every server at once: <code class="url">${esc(origin)}/mcp</code><br><span class="muted">Sign in with an Ethereum or Solana wallet to make an API key, or connect a chat app by OAuth with that wallet.${x402 ? ' Agents without an account can pay each call with x402.' : ''}</span></p>
<p><a class="cta" href="/app/">Start: connect a wallet</a></p>

<h2 id="plans">Plans</h2>
<p class="muted">A call is charged only when it answers with data; errors, empty answers and refusals are free. Prices in US dollars, paid in USDC${chains.length ? ` on ${esc(chains.join(', '))}` : ''}.</p>
${scrollBox('Plans', `<table><thead><tr><th scope="col">Plan</th><th scope="col">Price</th><th scope="col">Credits</th><th scope="col">Rate</th><th scope="col">API keys</th></tr></thead><tbody>${plans.map(planRow).join('')}</tbody></table>`)}
${
  packRows
    ? `<h2 id="packs">Credit packs</h2><p class="muted">Credits that do not expire, on top of any plan.</p>${scrollBox('Credit packs', `<table><thead><tr><th scope="col">Pack</th><th scope="col">Price</th><th scope="col">Per 1,000</th></tr></thead><tbody>${packRows}</tbody></table>`)}`
    : ''
}
${x402 ? `<p>Pay per call without an account: ${dollars(x402.usd_micros_per_credit / 10_000)} per credit in USDC with x402 at <code class="url">${esc(origin)}${esc(x402.path)}</code>.</p>` : ''}

<h2 id="servers">The servers and what each tool costs</h2>
<div class="servers">
${servers.map((s) => serverSection(s, origin)).join('\n')}
</div>
<p class="muted">The same catalogue as JSON: <a href="/v1/catalog">/v1/catalog</a>.</p>
</main>
</body>
</html>
`;
}
