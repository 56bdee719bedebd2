// What `npm start` prints on a fresh database: a demo account's key (once), the nine URLs, and
// client configurations in the two shapes the service documents.
import { accountCreate, accountGet, accountIdByWallet, DEMO_WALLET, type Account } from './accounts/accounts.ts';
import type { Database } from './db/pool.ts';
import { keyCreate } from './keys/store.ts';
import type { ServerName } from './mcp/names.ts';

export { DEMO_WALLET };

export interface DemoAccount {
  account: Account;
  /** The key's plaintext, only on the start that created the account (it is never stored). */
  key?: string;
}

/**
 * On a database with no accounts, creates the demo account and its key. On a later start, the
 * demo account as it is now (its key was shown once), if it is there.
 */
export async function ensureDemoAccount(db: Database): Promise<DemoAccount | undefined> {
  const existing = await db.query<{ n: number }>('SELECT count(*) AS n FROM accounts');
  if (existing.rows[0]!.n > 0) {
    const id = await accountIdByWallet(db, 'ethereum', DEMO_WALLET);
    const account = id === undefined ? undefined : await accountGet(db, id);
    return account && { account };
  }
  const account = await accountCreate(db, { wallet: DEMO_WALLET, chain: 'ethereum', plan: 'free' });
  const { plaintext } = await keyCreate(db, account.id, { name: 'demo', description: 'Created by npm start on a fresh database.' });
  return { account, key: plaintext };
}

interface ClientEntry {
  url: string;
  transport: 'http';
  headers: { 'x-api-key': string };
}

export function clientConfigs(baseUrl: string, key: string, servers: readonly ServerName[]) {
  const entries: Record<string, ClientEntry> = {};
  for (const name of servers) {
    entries[`cryptomcp-${name}`] = { url: `${baseUrl}/mcp/${name}`, transport: 'http', headers: { 'x-api-key': key } };
  }
  return {
    /** Desktop assistants: entries under mcpServers, keyed by a label. */
    desktop: { mcpServers: entries },
    /** Code editors: entries under mcp -> servers. */
    editor: { mcp: { servers: entries } },
  };
}

export function banner(opts: {
  baseUrl: string;
  metricsPort: number | null;
  database: string;
  /** Where traces go and what share is sampled (describeTracing); no line when absent. */
  tracing?: string;
  servers: readonly ServerName[];
  demo?: DemoAccount;
}): string {
  const lines = [
    `cryptomcp is serving ${opts.servers.length} MCP server${opts.servers.length === 1 ? '' : 's'} on ${opts.baseUrl}`,
    `  dashboard: ${opts.baseUrl}/app/    (sign in with a wallet, create API keys, see usage)`,
    `  database: ${opts.database}`,
    `  catalog:  ${opts.baseUrl}/v1/catalog    metrics: ${opts.metricsPort === null ? 'off (METRICS_ENABLED=false)' : `http://localhost:${opts.metricsPort}/metrics`}`,
    ...(opts.tracing ? [`  tracing:  ${opts.tracing}`] : []),
    '',
    `  ${'every server, one URL'.padEnd(22)} ${opts.baseUrl}/mcp`,
    ...opts.servers.map((s) => `  ${s.padEnd(22)} ${opts.baseUrl}/mcp/${s}`),
  ];
  if (opts.demo && opts.demo.key === undefined) {
    const { account } = opts.demo;
    lines.push(
      '',
      `The demo account ${account.id} (${account.plan} plan, ${account.balance} credits left) is from an earlier start; its key was shown only then.`,
      `To get a key: sign in to the dashboard (${opts.baseUrl}/app/) with your wallet for an account of your own,`,
      'or create a key for the demo account (from this folder, with the same DATA_DIR or DATABASE_URL):',
      '',
      `  npx cryptomcp keys create --account ${account.id} --name demo`,
    );
  } else if (opts.demo?.key !== undefined) {
    const configs = clientConfigs(opts.baseUrl, opts.demo.key, opts.servers);
    lines.push(
      '',
      `A demo account was created on the free plan (${opts.demo.account.balance} credits): ${opts.demo.account.id}`,
      'Its API key, shown only this once:',
      '',
      `  ${opts.demo.key}`,
      '',
      `The first wallet to sign in to the dashboard (${opts.baseUrl}/app/) takes this account over: its key, credits and usage are then yours there.`,
      '',
      'Try it:',
      `  curl -s ${opts.baseUrl}/mcp/market-intelligence -H 'x-api-key: ${opts.demo.key}' -H 'content-type: application/json' \\`,
      `    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_usage","arguments":{}}}'`,
      '',
      'Desktop assistants (add to the mcpServers of your client config):',
      JSON.stringify(configs.desktop, null, 2),
      '',
      'Code editors (mcp -> servers):',
      JSON.stringify(configs.editor, null, 2),
    );
  }
  return lines.join('\n');
}
