// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the real
// service and PostgreSQL: a person connects a wallet, gets a free account with 150 credits,
// creates a key, copies a client configuration, calls a tool with the key through the MCP SDK
// client, sees the balance go down on the Usage page, revokes and rotates keys, links a Solana
// wallet and signs in with it; a cross-site POST is refused. Also: the first page explains the
// product from the catalog; a double-click makes one key; Create is disabled at the plan's cap;
// no view overflows sideways at 375 or 1280 px with long inputs, nor fails axe-core in light or
// dark; wallet rejections and refused sign-ins read as sentences; an ended session returns to
// sign-in. With SCREENSHOTS=1, screenshots of each page go to test-artifacts/dashboard/ (not committed).
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLog } from '../../server/dashboard/requestLog.ts';
import { createDatabase } from '../../server/db/pool.ts';
import type { Devnet } from '../../server/devnet/devnet.ts';
import type { RunningService } from '../../server/runtime.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { mcpClient, post, startTestService, toolCall } from '../helpers/service.ts';
import { rpcEnv } from '../dashboard/helpers.ts';
import { expectAccessibleIn, expectNoOverflowIn, SCHEMES, screenshot, signInWith, signOut, useScheme, VIEWPORTS } from './browser.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';
import { injectWallets, type InjectedWallets } from './wallets.ts';

let rig: DashboardRig<Devnet>;
let db: TestDatabase;
let service: RunningService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let wallets: InjectedWallets;
const evmAccount = privateKeyToAccount(generatePrivateKey());
/** Every confirm() the page asked, in order (all are accepted). */
const dialogs: string[] = [];

async function shot(name: string): Promise<void> {
  await screenshot(page, `dashboard/${name}.png`);
}

/** WCAG 2 A/AA checks by axe-core in the page; serious or critical findings fail. */
const expectAccessible = (target: Page = page) => expectAccessibleIn(target);
const expectNoOverflow = (where: string, target: Page = page) => expectNoOverflowIn(where, target);

async function mcpStatus(key: string): Promise<{ status: number; code?: string }> {
  const res = await post(`${service.url}/mcp/market-intelligence`, toolCall('get_capabilities'), { 'x-api-key': key });
  return { status: res.status, code: (res.body as { error?: { code: string } }).error?.code };
}

beforeAll(async () => {
  // A local chain answers the server's EIP-1271 question for signatures that are not the address's own.
  rig = await startDashboardRig({
    devnet: true,
    env: (d) => ({ ...rpcEnv(d.manifest.rpc_url), MCP_SERVERS: 'market-intelligence,price-prediction', DASHBOARD_SIGN_IN_LIMIT: '100' }),
  });
  ({ db, service, browser } = rig);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
  wallets = await injectWallets(context, evmAccount);
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  // Under the test's own timeout, so a missing element fails with the locator's message.
  page.setDefaultTimeout(15_000);
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

describe('dashboard in Chromium', () => {
  let accountId: string;
  let firstKey: string;

  it('the first page says what cryptomcp is, lists the served servers with what they answer and what a call costs (from /v1/catalog), and leads to sign-in', async () => {
    await page.goto(`${service.url}/app/`);
    await page.getByRole('heading', { name: 'cryptomcp', level: 1 }).waitFor();
    expect(await page.locator('p.lead').textContent()).toMatch(/MCP servers your client calls over HTTP with an API key, paid for in credits/);
    const catalog = (await (await fetch(`${service.url}/v1/catalog`)).json()) as { servers: { name: string; description: string; tools: { credits: number }[] }[] };
    const list = page.getByTestId('server-list');
    await list.waitFor();
    expect(await list.locator('li').count()).toBe(catalog.servers.length);
    for (const s of catalog.servers) {
      const item = list.locator('li', { has: page.getByRole('heading', { name: s.name }) });
      expect(await item.textContent()).toContain(s.description);
      const paid = s.tools.map((t) => t.credits).filter((c) => c > 0);
      const range = Math.min(...paid) === Math.max(...paid) ? `${Math.min(...paid)} credit` : `${Math.min(...paid)}–${Math.max(...paid)} credits`;
      expect(await item.textContent()).toContain(`A call costs ${range}`);
    }
    expect(await page.getByRole('heading', { name: 'Sign in to cryptomcp' }).isVisible()).toBe(true);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const scheme of SCHEMES) {
        await useScheme(page, scheme);
        await expectNoOverflow(`first page at ${viewport.width} px, ${scheme}`);
        await expectAccessible();
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(VIEWPORTS[0]);
  });

  it('connecting an injected EIP-6963 wallet signs in with SIWE and creates a free account with 150 credits', async () => {
    await page.goto(`${service.url}/app/`);
    await page.getByRole('heading', { name: 'Sign in to cryptomcp' }).waitFor();
    await page.getByRole('button', { name: 'Test Wallet', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Test Solana Wallet' }).waitFor();
    await shot('1-sign-in');
    await expectAccessible();

    // Keyboard only: Tab to the wallet and press Enter.
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Test Wallet'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Test Wallet');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByTestId('header-balance').textContent()).toBe('150 credits');
    // What the wallet was asked to sign is an EIP-4361 message for this origin and Ethereum.
    const prompt = wallets.prompts.at(-1)!;
    expect(prompt).toContain(`${new URL(service.url).host} wants you to sign in with your Ethereum account:\n${evmAccount.address}`);
    expect(prompt).toContain('Chain ID: 1');
    const row = await db.query<{ account_id: string; plan: string; balance: number }>(
      `SELECT w.account_id, a.plan, a.balance FROM wallets w JOIN accounts a ON a.id = w.account_id WHERE w.address = $1`,
      [evmAccount.address.toLowerCase()],
    );
    expect(row.rows[0]).toMatchObject({ plan: 'free', balance: 150 });
    accountId = row.rows[0]!.account_id;
    const cookies = await context.cookies(`${service.url}/api/session`);
    const session = cookies.find((c) => c.name === 'cmcp_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api' });
    // httpOnly: the page's scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain('cmcp_session');
  });

  it('creates a key with name, description and expiry, shows it once and copies it', async () => {
    await page.getByLabel('Name').fill('laptop assistant');
    await page.getByLabel('Description').fill('Claude Desktop on my laptop');
    const expiry = await page.getByLabel('Expires on').inputValue();
    // The suggested expiry is 90 days out.
    expect(Math.round((Date.parse(expiry) - Date.now()) / 86400_000)).toBeGreaterThanOrEqual(89);
    await page.getByRole('checkbox', { name: 'price-prediction' }).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    firstKey = (await page.getByTestId('new-key').textContent())!;
    expect(firstKey).toMatch(/^cmcp_[0-9A-Za-z]{38}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(firstKey);
    const row = page.locator('tbody tr', { hasText: 'laptop assistant' });
    await expect.poll(() => row.textContent()).toContain('market-intelligence');
    expect(await row.textContent()).toContain(firstKey.slice(0, 11));
    expect(await row.textContent()).toContain('active');
    const stored = await db.query<{ servers: string[]; description: string; expires_at: Date }>(
      'SELECT servers, description, expires_at FROM api_keys WHERE account_id = $1',
      [accountId],
    );
    expect(stored.rows[0]).toMatchObject({ servers: ['market-intelligence'], description: 'Claude Desktop on my laptop' });
    expect(stored.rows[0]!.expires_at.toISOString().slice(0, 10)).toBe(expiry);
    await shot('2-keys');
    await expectAccessible();
  });

  it('the Connect page gives copy-ready configurations for the key and servers', async () => {
    await page.getByRole('link', { name: 'Connect a client' }).click();
    await page.getByRole('heading', { name: 'Connect a client' }).waitFor();
    // The all-in-one URL comes first, with one-click installs for Cursor and VS Code and the claude mcp add line.
    const allInOne = `${service.url}/mcp`;
    expect(await page.getByTestId('all-in-one-url').textContent()).toBe(allInOne);
    const cursor = new URL((await page.getByRole('link', { name: 'Add to Cursor' }).getAttribute('href'))!);
    expect(cursor.protocol).toBe('cursor:');
    expect(JSON.parse(Buffer.from(cursor.searchParams.get('config')!, 'base64').toString('utf8'))).toMatchObject({ url: allInOne });
    const vscodeLink = (await page.getByRole('link', { name: 'Add to VS Code' }).getAttribute('href'))!;
    expect(JSON.parse(decodeURIComponent(vscodeLink.replace(/^vscode:mcp\/install\?/, '')))).toMatchObject({ name: 'cryptomcp', type: 'http', url: allInOne });
    expect(await page.getByTestId('claude-code-add').textContent()).toBe(`claude mcp add --transport http cryptomcp ${allInOne} --header "x-api-key: ${firstKey}"`);
    const desktop = JSON.parse((await page.getByTestId('client-config').textContent())!);
    expect(desktop).toEqual({
      mcpServers: { 'cryptomcp-market-intelligence': { url: `${service.url}/mcp/market-intelligence`, transport: 'http', headers: { 'x-api-key': firstKey } } },
    });
    await page.getByRole('tab', { name: 'Claude Code' }).click();
    const claudeCode = JSON.parse((await page.getByTestId('client-config').textContent())!);
    expect(claudeCode.mcpServers['cryptomcp-market-intelligence']).toEqual({
      type: 'http',
      url: `${service.url}/mcp/market-intelligence`,
      headers: { 'x-api-key': '${CRYPTOMCP_API_KEY}' },
    });
    await page.getByRole('tab', { name: 'VS Code' }).click();
    const vscode = JSON.parse((await page.getByTestId('client-config').textContent())!);
    expect(vscode.inputs[0]).toMatchObject({ type: 'promptString', password: true });
    await page.getByRole('button', { name: 'Copy configuration' }).click();
    await page.getByText('Copied.').waitFor();
    expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual(vscode);
    await page.getByRole('tab', { name: 'mcpServers (url + header)' }).click();
    await shot('3-connect');
    await expectAccessible();
  });

  it('a real MCP call with the copied configuration spends credits, and the Usage page shows it', async () => {
    const desktop = JSON.parse(await page.evaluate(() => navigator.clipboard.readText().then(() => document.querySelector('[data-testid=client-config]')!.textContent!)));
    const entry = desktop.mcpServers['cryptomcp-market-intelligence'];
    const client = await mcpClient(entry.url.replace(/\/mcp\/.*$/, ''), 'market-intelligence', entry.headers['x-api-key']);
    let spent: number;
    try {
      const result = await client.callTool({ name: 'get_prices', arguments: { assets: ['bitcoin', 'ethereum'] } });
      const env = result.structuredContent as { success: boolean; metadata: { credits_used: number; remaining_credits: number } };
      expect(env.success).toBe(true);
      spent = env.metadata.credits_used;
      expect(env.metadata.remaining_credits).toBe(150 - spent);
    } finally {
      await client.close();
    }
    expect(spent).toBeGreaterThan(0);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('balance').waitFor();
    expect(await page.getByTestId('balance').textContent()).toBe(String(150 - spent));
    expect(await page.getByTestId('calls').textContent()).toBe('1');
    expect(await page.getByTestId('by-tool').textContent()).toContain('get_prices');
    // The header's balance comes from a second request: the Usage page asks for /api/session only
    // once its own numbers have arrived (onLoaded), so it can still show the old balance here.
    await expect.poll(() => page.getByTestId('header-balance').textContent(), { timeout: 15_000, interval: 50 }).toBe(`${150 - spent} credits`);
    // The three charts drew on their canvases: calls by server, credits by tool, requests by outcome
    // (the last from the usage breakdown, a request of its own that may answer later).
    await expect.poll(() => page.locator('canvas').count(), { timeout: 15_000, interval: 50 }).toBe(3);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export CSV' }).click();
    const csv = fs.readFileSync((await (await download).path())!, 'utf8');
    // The row's day is the UTC day the database recorded the call on, read back from it, not the
    // test's clock now: a call at 23:59:59 is still in yesterday's row after midnight.
    const { rows } = await db.query<{ day: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM credit_ledger WHERE kind = 'reserve' AND tool = 'get_prices'`,
    );
    expect(rows).toHaveLength(1);
    expect(csv).toBe(`day,server,tool,calls,credits\r\n${rows[0]!.day},market-intelligence,get_prices,1,${spent}\r\n`);
    await shot('4-usage');
    await expectAccessible();
  });

  it('the Plans page lists the four plans with the current one marked', async () => {
    await page.getByRole('link', { name: 'Plans' }).click();
    await page.getByRole('heading', { name: /Free/ }).waitFor();
    for (const name of ['Free', 'Basic', 'Pro', 'Premium']) expect(await page.getByRole('heading', { name: new RegExp(name) }).count()).toBe(1);
    const current = page.locator('li[aria-current="true"]');
    expect(await current.textContent()).toContain('Free');
    expect(await current.textContent()).toContain('150 credits');
    expect(await page.locator('li.plan', { hasText: 'Pro' }).textContent()).toContain('15,000 credits');
    await shot('5-plans');
    await expectAccessible();
  });

  it('Quick start fills a curl command with the new key and a chosen tool; pasted into a shell it makes a paid call; the tool catalog shows costs and input schemas', async () => {
    await page.getByRole('link', { name: 'Quick start' }).click();
    await page.getByRole('heading', { name: 'Quick start', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: /^Tool\b/ }).selectOption('get_prices');
    const catalog = (await (await fetch(`${service.url}/v1/catalog`)).json()) as { servers: { name: string; tools: { name: string; credits: number }[] }[] };
    const cost = catalog.servers.find((s) => s.name === 'market-intelligence')!.tools.find((t) => t.name === 'get_prices')!.credits;
    await expect.poll(() => page.getByTestId('qs-tool-cost').textContent()).toContain(`get_prices costs ${cost} credit`);
    const curl = (await page.getByTestId('qs-curl').textContent())!;
    expect(curl).toContain(`-H 'x-api-key: ${firstKey}'`);
    const sdk = (await page.getByTestId('qs-sdk').textContent())!;
    expect(sdk).toContain(`new URL('${service.url}/mcp/market-intelligence')`);
    expect(sdk).toContain(`'x-api-key': '${firstKey}'`);
    // What a newcomer does: paste the command into a shell.
    const { stdout } = await promisify(execFile)('sh', ['-c', curl]);
    const answer = JSON.parse(stdout) as { result: { structuredContent: { success: boolean; metadata: { credits_used: number } } } };
    expect(answer.result.structuredContent).toMatchObject({ success: true, metadata: { credits_used: cost } });
    // The catalog: every tool of the server with its cost, and its input schema on demand.
    const rows = page.getByTestId('qs-catalog').locator('tbody tr');
    expect(await rows.count()).toBe(catalog.servers.find((s) => s.name === 'market-intelligence')!.tools.length);
    const row = rows.filter({ hasText: 'get_prices' });
    expect(await row.textContent()).toContain(`${cost} credit`);
    await row.getByText('Input schema').click();
    expect(await row.locator('pre').textContent()).toContain('"assets"');
    await shot('10-quick-start');
    await expectAccessible();
  });

  it('the request log on the Usage page lists the calls made with the key (the Quick start curl, logged by the gateway) and what the hook recorded, each with its request id, and filters by status', async () => {
    const key = await db.query<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1 AND name = 'laptop assistant'`, [accountId]);
    const pool = createDatabase({ url: db.url, max: 1 });
    try {
      const log = createRequestLog(pool);
      const base = { account_id: accountId, key_id: key.rows[0]!.id, server: 'market-intelligence', method: 'tools/call', tool: 'get_prices', latency_ms: 8 };
      log.record({ ...base, request_id: 'req-e2e-ok', status: 200, error_code: null, credits: 2, created_at: new Date(Date.now() - 1000) });
      log.record({ ...base, request_id: 'req-e2e-429', status: 429, error_code: 'RATE_LIMITED', credits: 0, created_at: new Date() });
      await log.close();
    } finally {
      await pool.close();
    }
    await page.getByRole('link', { name: 'Usage' }).click();
    const table = page.getByTestId('request-log');
    await table.locator('tbody tr', { hasText: 'req-e2e-ok' }).waitFor();
    expect(await table.locator('tbody tr', { hasText: 'req-e2e-429' }).textContent()).toContain('429 RATE_LIMITED');
    // The key's name shows once the page has the account's keys ("…" until then).
    await expect.poll(() => table.locator('tbody tr', { hasText: 'req-e2e-ok' }).textContent()).toContain('laptop assistant');
    // The Quick start's curl call (an earlier test) reached the log through the gateway itself.
    await expect.poll(() => table.locator('tbody tr').filter({ hasNotText: 'req-e2e-' }).count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await page.getByRole('combobox', { name: /^Status/ }).selectOption({ label: 'Rate-limited (429)' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').textContent()).toContain('req-e2e-429');
    await page.getByRole('combobox', { name: /^Status/ }).selectOption({ label: 'Any status' });
    await expect.poll(() => table.locator('tbody tr').count()).toBeGreaterThanOrEqual(3);
    await expectAccessible();
  });

  it('a double-click on Create sends one request and makes exactly one key; a repeat of that request answers the same key', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    const posts: Request[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/keys') posts.push(r);
    };
    page.on('request', onRequest);
    try {
      await page.getByLabel('Name').fill('double click');
      await page.getByRole('button', { name: 'Create key' }).dblclick();
      await page.getByRole('heading', { name: 'Your new key “double click”' }).waitFor();
      await page.locator('tbody tr', { hasText: 'double click' }).waitFor();
      // Two submits in the same frame, before React can render the busy state.
      await page.getByLabel('Name').fill('double submit');
      await page.evaluate(() => {
        const form = document.querySelector<HTMLFormElement>('section[aria-labelledby="create-title"] form')!;
        form.requestSubmit();
        form.requestSubmit();
      });
      await page.getByRole('heading', { name: 'Your new key “double submit”' }).waitFor();
      await page.locator('tbody tr', { hasText: 'double submit' }).waitFor();
    } finally {
      page.off('request', onRequest);
    }
    expect(posts).toHaveLength(2);
    const names = await db.query<{ name: string }>(`SELECT name FROM api_keys WHERE account_id = $1 AND name LIKE 'double%' ORDER BY name`, [accountId]);
    expect(names.rows.map((r) => r.name)).toEqual(['double click', 'double submit']);
    // A retry of the same request (as after a lost response) answers the key already made.
    const first = posts[0]!;
    const headers = first.headers();
    expect(headers['idempotency-key']).toMatch(/^[0-9a-f]{32}$/);
    const replay = await page.evaluate(
      ({ body, headers }) => fetch('/api/keys', { method: 'POST', headers, body }).then(async (r) => ({ status: r.status, body: await r.json() })),
      { body: first.postData()!, headers: { 'content-type': 'application/json', 'x-csrf-token': headers['x-csrf-token']!, 'idempotency-key': headers['idempotency-key']! } },
    );
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ replayed: true, plaintext: null, key: { name: 'double click' } });
    const again = await db.query(`SELECT 1 FROM api_keys WHERE account_id = $1 AND name = 'double click'`, [accountId]);
    expect(again.rowCount).toBe(1);
  });

  it('revoking a key in the page makes /mcp answer 401 for it; revoked keys are hidden behind a toggle', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    expect((await mcpStatus(firstKey)).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke laptop assistant' }).click();
    expect(dialogs.at(-1)).toContain('Revoke "laptop assistant"');
    const toggle = page.getByRole('checkbox', { name: /Show revoked and expired keys/ });
    await toggle.waitFor();
    expect(await page.locator('tbody tr', { hasText: 'laptop assistant' }).count()).toBe(0);
    await toggle.check();
    await page.locator('tbody tr', { hasText: 'laptop assistant' }).getByText('revoked').waitFor();
    expect(await mcpStatus(firstKey)).toEqual({ status: 401, code: 'API_KEY_REVOKED' });
  });

  it('rotating a key shows the new key once; with no grace period the old key stops at once', async () => {
    await page.getByLabel('Name').fill('ci runner');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Your new key “ci runner”' }).waitFor();
    const oldKey = (await page.getByTestId('new-key').textContent())!;
    await page.locator('tbody tr', { hasText: 'ci runner' }).first().getByText('active').waitFor();
    await page.getByLabel('Rotation grace period for ci runner').first().selectOption({ label: 'Revoke the old key now' });
    const asked = dialogs.length;
    const utcDay = () => new Date().toISOString().slice(0, 10);
    const dayBefore = utcDay();
    await page.getByRole('button', { name: 'Rotate ci runner' }).first().click();
    await expect.poll(() => page.getByTestId('new-key').textContent()).not.toBe(oldKey);
    // Rotation asks first, and says what happens to the old key.
    expect(dialogs.slice(asked)).toEqual([expect.stringMatching(/^Rotate "ci runner" .*the old key stops working at once\.$/)]);
    const newKey = (await page.getByTestId('new-key').textContent())!;
    // The new key is named apart from the old one, after the UTC day of the rotation (the day
    // the click was made on, or the next if midnight passed meanwhile: not the test's clock now).
    const heading = page.getByRole('heading', { name: /^Your new key “ci runner \(rotated \d{4}-\d{2}-\d{2}\)”$/ });
    await heading.waitFor();
    const rotatedName = /“(.*)”/.exec((await heading.textContent())!)![1]!;
    expect([`ci runner (rotated ${dayBefore})`, `ci runner (rotated ${utcDay()})`]).toContain(rotatedName);
    await page.locator('tbody tr', { hasText: rotatedName }).waitFor();
    expect(await mcpStatus(oldKey)).toEqual({ status: 401, code: 'API_KEY_REVOKED' });
    const oldRow = page.locator('tbody tr', { hasText: 'Replaced by a rotation' });
    expect(await oldRow.textContent()).toContain(oldKey.slice(0, 11));
    expect(await oldRow.textContent()).toContain('revoked');
    expect((await mcpStatus(newKey)).status).toBe(200);
    await shot('6-keys-rotated');
  });

  it('editing a key changes its name and servers in place: the same key (id and prefix), its settings stored', async () => {
    const before = await db.query<{ id: string; prefix: string }>(`SELECT id, prefix FROM api_keys WHERE account_id = $1 AND name = 'double click'`, [accountId]);
    await page.getByRole('button', { name: 'Edit double click' }).click();
    await page.getByRole('heading', { name: 'Edit “double click”' }).waitFor();
    // The form opens on the key's own settings, focus on its heading.
    expect(await page.getByLabel('New name').inputValue()).toBe('double click');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('edit-title');
    await page.getByLabel('New name').fill('double click (laptop)');
    const editForm = page.locator('section[aria-labelledby="edit-title"]');
    await editForm.getByRole('checkbox', { name: 'price-prediction' }).uncheck();
    await editForm.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('tbody tr', { hasText: 'double click (laptop)' }).waitFor();
    expect(await editForm.count()).toBe(0);
    expect(await page.locator('tbody tr', { hasText: 'double click (laptop)' }).textContent()).toContain('market-intelligence');
    const after = await db.query<{ id: string; prefix: string; servers: string[] }>(`SELECT id, prefix, servers FROM api_keys WHERE id = $1`, [before.rows[0]!.id]);
    expect(after.rows[0]).toEqual({ ...before.rows[0], servers: ['market-intelligence'] });
  });

  it('at the plan cap Create is disabled and says why; a blank name reads as a sentence; no view overflows sideways at 1280 or 375 px with long inputs, or fails axe-core, in light or dark', async () => {
    // double click, double submit and the rotated ci runner: 3 of the free plan's 3.
    const create = page.getByRole('button', { name: 'Create key' });
    await expect.poll(() => create.isDisabled()).toBe(true);
    expect(await page.getByTestId('cap-note').textContent()).toContain('You have 3 of 3 active keys, the most your plan allows. Revoke a key you no longer use');
    await page.getByRole('button', { name: 'Revoke double submit' }).click();
    await expect.poll(() => create.isDisabled()).toBe(false);
    await page.getByLabel('Name').fill('   ');
    await create.click();
    await expect.poll(() => page.locator('section[aria-labelledby="create-title"] [role=alert]').textContent()).toBe('Give the key a name of 1 to 64 characters.');
    // The longest inputs the API takes: a 64-character name and a 500-character description, one without spaces.
    const longName = 'n'.repeat(64);
    await page.getByLabel('Name').fill(longName);
    await page.getByLabel('Description').fill(`${'d'.repeat(300)} ${'word '.repeat(39)}x`.slice(0, 500));
    await create.click();
    await page.locator('tbody tr', { hasText: longName }).waitFor();
    await expect.poll(() => create.isDisabled()).toBe(true);

    const views = [
      { link: 'API keys', ready: () => page.locator('tbody tr', { hasText: longName }).waitFor() },
      { link: 'Quick start', ready: () => page.getByTestId('qs-catalog').waitFor() },
      { link: 'Connect a client', ready: () => page.getByTestId('client-config').waitFor() },
      { link: 'Usage', ready: () => Promise.all([page.getByTestId('by-tool').waitFor(), page.getByTestId('outcome-totals').waitFor()]) },
      { link: 'Plans', ready: () => page.getByRole('heading', { name: 'Wallets on this account' }).waitFor() },
      { link: 'Connected apps', ready: () => page.getByTestId('no-apps').or(page.getByTestId('connected-apps')).waitFor() },
      { link: 'Webhooks', ready: () => page.getByTestId('no-webhooks').or(page.getByRole('heading', { name: 'Your endpoints' })).first().waitFor() },
    ];
    try {
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        for (const scheme of SCHEMES) {
          await useScheme(page, scheme);
          for (const view of views) {
            await page.getByRole('link', { name: view.link }).click();
            await view.ready();
            await expectNoOverflow(`${view.link} at ${viewport.width} px, ${scheme}`);
            await expectAccessible();
          }
        }
        await page.getByRole('link', { name: 'API keys' }).click();
        await page.locator('tbody tr', { hasText: longName }).waitFor();
        await shot(`9-keys-${viewport.width}-dark`);
      }
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize(VIEWPORTS[0]);
    }
  }, 90_000);

  it('links a Solana wallet (Wallet Standard, ed25519) and signs in with it to the same account', async () => {
    await page.getByRole('link', { name: 'Plans' }).click();
    // The picker can be closed without linking.
    await page.getByRole('button', { name: 'Link another wallet' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('button', { name: 'Test Solana Wallet' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Link another wallet' }).click();
    await page.getByRole('button', { name: 'Test Solana Wallet' }).click();
    await page.getByText(wallets.solanaAddress).waitFor();
    await shot('7-wallet-linked');
    expect(wallets.prompts.at(-1)).toContain(`wants you to sign in with your Solana account:\n${wallets.solanaAddress}`);
    await signOut(page);
    await page.getByRole('button', { name: 'Test Solana Wallet' }).click();
    // Signed in again, on the page the person was on (Plans).
    await page.getByRole('heading', { name: 'Plans' }).waitFor();
    const session = await page.evaluate(() => fetch('/api/session').then((r) => r.json()));
    expect(session.account.id).toBe(accountId);
    expect(session.wallet).toEqual({ family: 'solana', address: wallets.solanaAddress });
  });

  it('a fresh Solana wallet signs in to a new free account', async () => {
    const other = await browser.newContext();
    try {
      const otherWallets = await injectWallets(other, privateKeyToAccount(generatePrivateKey()));
      const p = await other.newPage();
      await signInWith(p, service.url, 'Test Solana Wallet');
      expect(await p.getByTestId('header-balance').textContent()).toBe('150 credits');
      expect(await p.getByTestId('low-balance').count()).toBe(0);
      const session = await p.evaluate(() => fetch('/api/session').then((r) => r.json()));
      expect(session.account.id).not.toBe(accountId);
      // A tenth of the allowance or less left: a notice on every page. (A throwaway account: its
      // balance is set directly, which the ledger invariant of real accounts never allows.)
      await db.query('UPDATE accounts SET balance = 15 WHERE id = $1', [session.account.id]);
      await p.reload();
      await p.getByTestId('low-balance').waitFor();
      expect(await p.getByTestId('low-balance').textContent()).toContain('Your balance is low: 15 of 150 credits left.');
      await expectAccessible(p);
      expect(session.account.wallets).toEqual([expect.objectContaining({ chain: 'solana', address: otherWallets.solanaAddress })]);
    } finally {
      await other.close();
    }
  });

  it('refused sign-ins say why in the page: a signature from another address, an expired nonce, a replayed message', async () => {
    const other = await browser.newContext();
    try {
      const stranger = privateKeyToAccount(generatePrivateKey());
      const w = await injectWallets(other, stranger);
      const p = await other.newPage();
      await p.goto(`${service.url}/app/`);
      const alert = p.locator('.picker [role=alert]');

      // Pressing Reject in the wallet (EVM and Solana): a sentence, not viem's error dump.
      w.misbehave({ reject: true });
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await expect.poll(() => alert.textContent()).toBe('You cancelled the signature in your wallet. Nothing was signed; click your wallet again when you are ready.');
      await p.getByRole('button', { name: 'Test Solana Wallet' }).click();
      await expect.poll(() => alert.textContent()).toBe('You cancelled the signature in your wallet. Nothing was signed; click your wallet again when you are ready.');

      w.misbehave({ signWith: privateKeyToAccount(generatePrivateKey()) });
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await expect.poll(() => alert.textContent()).toBe('The signature does not belong to the address your wallet shared. Choose that account in your wallet and try again.');

      w.misbehave({ beforeSign: async () => void (await db.query(`UPDATE dashboard_nonces SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`)) });
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await expect.poll(() => alert.textContent()).toBe(
        'The sign-in request expired before your wallet signed it. Click your wallet again and approve the signature within a few minutes.',
      );

      // An honest sign-in, whose request is then sent again from the same page and cookies.
      w.misbehave({});
      const signIn = p.waitForRequest((r) => r.url().endsWith('/api/auth/sign-in') && r.method() === 'POST');
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      const body = (await signIn).postData()!;
      await p.getByRole('heading', { name: 'API keys' }).waitFor();
      const replay = await p.evaluate(
        (b) => fetch('/api/auth/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: b }).then(async (r) => ({ status: r.status, body: await r.json() })),
        body,
      );
      expect(replay.status).toBe(401);
      expect(replay.body.error.details.reason).toMatch(/^nonce_(used|mismatch)$/);
      const accounts = await db.query('SELECT 1 FROM wallets WHERE address = $1', [stranger.address.toLowerCase()]);
      expect(accounts.rowCount).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('a wallet on another network than the chosen chain is asked to switch; refusing says what to do, switching signs in for that chain', async () => {
    const other = await browser.newContext();
    try {
      const w = await injectWallets(other, privateKeyToAccount(generatePrivateKey()));
      const p = await other.newPage();
      await p.goto(`${service.url}/app/`);
      await p.getByRole('combobox', { name: /^Chain/ }).selectOption({ label: 'Base' });
      w.misbehave({ rejectSwitch: true });
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await expect.poll(() => p.locator('.picker [role=alert]').textContent()).toBe(
        'Your wallet is on Ethereum, not Base. Approve the network switch in your wallet, or pick Ethereum in the Chain list, and try again.',
      );
      expect(w.switchRequests).toEqual([8453]);
      const promptsBefore = w.prompts.length;
      w.misbehave({});
      await p.getByRole('button', { name: 'Test Wallet', exact: true }).click();
      await p.getByRole('heading', { name: 'API keys' }).waitFor();
      expect(w.chainId()).toBe(8453);
      // Nothing was signed while the wallet was on the wrong network; then the message named Base.
      expect(w.prompts.length).toBe(promptsBefore + 1);
      expect(w.prompts.at(-1)).toContain('Chain ID: 8453');
    } finally {
      await other.close();
    }
  });

  it('with a WalletConnect project id configured, WalletConnect is offered beside the injected wallets', async () => {
    const withWc = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence', WALLETCONNECT_PROJECT_ID: '0123456789abcdef0123456789abcdef' });
    const other = await browser.newContext();
    try {
      await injectWallets(other, privateKeyToAccount(generatePrivateKey()));
      const p = await other.newPage();
      p.setDefaultTimeout(30_000);
      await p.goto(`${withWc.url}/app/`);
      // The connector loads lazily; it cannot reach the relay from here, so only its presence is checked.
      await p.getByRole('button', { name: 'WalletConnect' }).waitFor();
      expect(await p.getByRole('button', { name: 'Test Wallet', exact: true }).count()).toBe(1);
      await screenshot(p, 'dashboard/8-sign-in-walletconnect.png', { fullPage: false });
    } finally {
      await other.close();
      await withWc.close();
    }
  }, 60_000);

  it('a cross-site page cannot create a key with the signed-in browser (no cookie, wrong origin, no CSRF token)', async () => {
    // Another site: "localhost" is a different site from "127.0.0.1", so SameSite applies.
    const target = `${service.url}/api/keys`;
    const evil = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><form id="f" method="POST" action="${target}" enctype="text/plain"><input name='{"name":"evil","x":"' value='"}'></form>
<script>fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"name":"evil"}' }).catch(() => {});</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const port = (evil.address() as { port: number }).port;
      const attacker = await context.newPage();
      const formPost = attacker.waitForResponse((r) => r.url() === target && r.request().method() === 'POST');
      await attacker.goto(`http://localhost:${port}/`);
      await attacker.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit());
      const response = await formPost;
      expect(response.status()).toBe(403);
      expect(response.request().headers().cookie ?? '').not.toContain('cmcp_session');
      // The refused form's navigation is let land before the page closes: closing the headless
      // shell's page while that navigation was still committing took 30 s.
      await attacker.waitForURL(target);
      await attacker.close();
      const evilKeys = await db.query(`SELECT 1 FROM api_keys WHERE name = 'evil'`);
      expect(evilKeys.rowCount).toBe(0);
    } finally {
      evil.close();
    }
  });

  it('an ended session returns to sign-in with a short message, without the header of a signed-in page', async () => {
    await page.goto(`${service.url}/app/keys`);
    await page.getByTestId('header-balance').waitFor();
    // The page has everything it asked for before the session ends.
    await page.locator('tbody tr').first().waitFor();
    // The session ends on the server (expiry or a sign-out elsewhere) while the page is open.
    await db.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('session-note').waitFor();
    expect(await page.getByTestId('session-note').textContent()).toBe('Your session has ended. Sign in again to continue where you were.');
    await page.getByRole('heading', { name: 'Sign in to cryptomcp' }).waitFor();
    // The signed-in pages stay in the document, hidden and inert, so signing in again gives them back as they were.
    expect(await page.getByTestId('header-balance').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    // Signing in again goes back to the page the person was on.
    await page.getByRole('button', { name: 'Test Solana Wallet' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    expect(await page.getByTestId('session-note').count()).toBe(0);
  });
});
