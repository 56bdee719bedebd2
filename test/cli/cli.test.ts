// The `cryptomcp` CLI end to end, as an SRE runs it, against this file's own database
// (DATABASE_URL): `--json` output parsed, exit codes checked, the effects checked in SQL and
// against a real running service on the same database. Most cases run the command line in
// process (runCli: the same parser, handlers, output and exit code as the binary, without a Node
// start and an import of the whole graph per case); a few run the real process (`node
// server/cli.ts ...`), for what only a process shows: exit status, stdout/stderr, the
// migrations on an empty database and a key used by the MCP client.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../server/cli.ts';
import { loadMigrations } from '../../server/db/migrate.ts';
import type { RunningService } from '../../server/runtime.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { mcpClient, nextWallet, post, startTestService, type RawResponse } from '../helpers/service.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const KEY_RE = /^cmcp_[0-9A-Za-z]{38}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TTL_MS = 500;
const SLACK_MS = 200;

let db: TestDatabase;
let svc: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = await startTestService(db.url, { KEY_CACHE_TTL_MS: String(TTL_MS) });
});
afterAll(async () => {
  await svc?.close();
  await db?.drop();
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cryptomcp <args>` in process against `databaseUrl` (this file's database by default). */
async function cli(args: string[], databaseUrl = db.url): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
  });
  return { code, stdout, stderr };
}

/** Runs `cryptomcp <args>` as a process on Node 24, against `databaseUrl` (this file's database by default). */
function cliProcess(args: string[], databaseUrl = db.url): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['server/cli.ts', ...args], {
      cwd: REPO,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    // Generous: on a loaded 2-core machine a cold Node start with the whole import graph can take seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `cryptomcp --json <args>` that must succeed; returns the parsed output. */
async function ok<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const res = await cli(['--json', ...args]);
  expect(res.code, `cryptomcp ${args.join(' ')} failed:\n${res.stdout}\n${res.stderr}`).toBe(0);
  return JSON.parse(res.stdout) as T;
}

interface CliError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** `cryptomcp --json <args>` that must fail with exit code 1 and the coded error envelope on stdout. */
async function fails(args: string[], code: string): Promise<CliError> {
  const res = await cli(['--json', ...args]);
  expect(res.code, `cryptomcp ${args.join(' ')} should have failed:\n${res.stdout}\n${res.stderr}`).toBe(1);
  const body = JSON.parse(res.stdout) as { success: boolean; error: CliError };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

interface AccountJson {
  id: string;
  plan: string;
  status: string;
  balance: number;
  period_start: string;
  period_end: string | null;
  wallets: { chain: string; address: string }[];
}

interface KeyJson {
  id: string;
  account_id: string;
  prefix: string;
  name: string;
  description: string | null;
  servers: string[] | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  key?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function ping(key: string, server = 'market-intelligence'): Promise<RawResponse> {
  return post(`${svc.url}/mcp/${server}`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': key });
}

function codeOf(res: RawResponse): string | undefined {
  return (res.body as { error?: { code?: string } } | undefined)?.error?.code;
}

/**
 * Polls the service until `key` is rejected with status/code: no request sent more than the key
 * cache TTL (plus slack) after the CLI returned may still succeed.
 */
async function expectRejectedWithinTtl(key: string, status: number, code: string): Promise<void> {
  const since = Date.now();
  for (;;) {
    const sentAt = Date.now();
    const res = await ping(key);
    if (res.status === status && codeOf(res) === code) return;
    expect(res.status, `while waiting for ${code}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(sentAt - since, `a request sent ${sentAt - since} ms after the CLI returned still succeeded`).toBeLessThanOrEqual(TTL_MS + SLACK_MS);
    await sleep(25);
  }
}

async function ledger(accountId: string, kind?: string) {
  const res = await db.query<{ kind: string; delta: number; balance_after: number }>(
    `SELECT kind, delta, balance_after FROM credit_ledger WHERE account_id = $1 ${kind ? 'AND kind = $2' : ''} ORDER BY id`,
    kind ? [accountId, kind] : [accountId],
  );
  return res.rows;
}

async function countRows(table: 'accounts' | 'api_keys' | 'credit_ledger'): Promise<number> {
  return (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

const newFreeAccount = () => ok<AccountJson>(['accounts', 'create', '--wallet', nextWallet()]);

describe('cryptomcp plans list', { timeout: 120_000 }, () => {
  it('--json lists the four seed plans with credits, renewal, rate, burst, servers and max keys of DESIGN §5', async () => {
    const plans = await ok<Record<string, unknown>[]>(['plans', 'list']);
    const pick = (p: Record<string, unknown>) => ({
      name: p.name,
      credits: p.credits,
      renewal: p.renewal,
      requests_per_minute: p.requests_per_minute,
      burst: p.burst,
      max_keys: p.max_keys,
      servers: p.servers,
    });
    const all = [...SERVER_NAMES];
    expect(plans.map(pick)).toEqual([
      { name: 'free', credits: 150, renewal: 'one-time', requests_per_minute: 30, burst: 10, max_keys: 3, servers: all },
      { name: 'basic', credits: 5000, renewal: 'monthly', requests_per_minute: 60, burst: 20, max_keys: 10, servers: all },
      { name: 'pro', credits: 15000, renewal: 'monthly', requests_per_minute: 180, burst: 40, max_keys: 25, servers: all },
      { name: 'premium', credits: 35000, renewal: 'monthly', requests_per_minute: 600, burst: 100, max_keys: 50, servers: all },
    ]);
  });

  it('human output has one readable line per plan with its credits, renewal, rate, burst and key cap', async () => {
    const res = await cliProcess(['plans', 'list']);
    expect(res.code).toBe(0);
    expect(() => JSON.parse(res.stdout)).toThrow();
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    const rows: [string, number, string, number, number, number][] = [
      ['free', 150, 'one-time', 30, 10, 3],
      ['basic', 5000, 'monthly', 60, 20, 10],
      ['pro', 15000, 'monthly', 180, 40, 25],
      ['premium', 35000, 'monthly', 600, 100, 50],
    ];
    rows.forEach(([name, credits, renewal, rpm, burst, maxKeys], i) => {
      expect(lines[i]).toMatch(
        new RegExp(`^${name}\\s+${credits} credits\\s+${renewal}\\s+${rpm}/min burst ${burst}\\s+max keys ${maxKeys}\\b.*\\ball\\b`),
      );
    });
  });
});

describe('cryptomcp migrate', { timeout: 120_000 }, () => {
  it('reports migrations current on a migrated database (--json: applied [])', async () => {
    const [json, human] = await Promise.all([ok<{ applied: number[] }>(['migrate']), cli(['migrate'])]);
    expect(json).toEqual({ applied: [] });
    expect(human.code).toBe(0);
    expect(human.stdout.trim()).toBe('migrations are current');
  });

  it('applies every pending migration on an empty database, then reports current', async () => {
    const empty = await createTestDatabase({ migrate: false });
    try {
      const first = await cliProcess(['--json', 'migrate'], empty.url);
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toEqual({ applied: loadMigrations().map((m) => m.version) });
      const second = await cli(['--json', 'migrate'], empty.url);
      expect(JSON.parse(second.stdout)).toEqual({ applied: [] });
      const plans = await empty.query<{ n: number }>('SELECT count(*)::int AS n FROM plans');
      expect(plans.rows[0]!.n).toBe(4);
    } finally {
      await empty.drop();
    }
  });
});

describe('cryptomcp accounts', { timeout: 120_000 }, () => {
  it('create: an EVM wallet (default chain ethereum, default plan free) opens an active account with the free allowance', async () => {
    const wallet = nextWallet();
    const a = await ok<AccountJson>(['accounts', 'create', '--wallet', wallet]);
    expect(a.id).toMatch(UUID_RE);
    expect(a).toMatchObject({ plan: 'free', status: 'active', balance: 150, period_end: null });
    expect(a.wallets).toEqual([expect.objectContaining({ chain: 'ethereum', address: wallet.toLowerCase() })]);
    const row = await db.query('SELECT plan, balance, status FROM accounts WHERE id = $1', [a.id]);
    expect(row.rows[0]).toEqual({ plan: 'free', balance: 150, status: 'active' });
  });

  it('create: --chain and --plan are honoured; a mixed-case EVM address is stored lower-case; monthly plans get a renewal date', async () => {
    const wallet = `0xAbCdEf${nextWallet().slice(8)}`;
    const a = await ok<AccountJson>(['accounts', 'create', '--wallet', wallet, '--chain', 'base', '--plan', 'pro']);
    expect(a).toMatchObject({ plan: 'pro', status: 'active', balance: 15000 });
    expect(a.wallets).toEqual([expect.objectContaining({ chain: 'base', address: wallet.toLowerCase() })]);
    expect(a.period_end).not.toBeNull();
    const days = (Date.parse(a.period_end!) - Date.parse(a.period_start)) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(28);
    expect(days).toBeLessThanOrEqual(31);
  });

  it('create: a Solana wallet (base58) opens an account with its address as given', async () => {
    const wallet = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
    const a = await ok<AccountJson>(['accounts', 'create', '--wallet', wallet, '--chain', 'solana', '--plan', 'basic']);
    expect(a).toMatchObject({ plan: 'basic', balance: 5000 });
    expect(a.wallets).toEqual([expect.objectContaining({ chain: 'solana', address: wallet })]);
  });

  it('create: an invalid address exits 1 with INVALID_PARAMS (issues on wallet) and creates nothing', async () => {
    const before = await countRows('accounts');
    const cases = [
      ['--wallet', '0x123'],
      ['--wallet', 'not-an-address'],
      ['--wallet', '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV'], // Solana address on an EVM chain
      ['--wallet', `0x${'ab'.repeat(20)}`, '--chain', 'solana'], // EVM address on Solana
      ['--wallet', '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', '--chain', 'solana'], // not base58
    ];
    const errors = await Promise.all(cases.map((args) => fails(['accounts', 'create', ...args], 'INVALID_PARAMS')));
    errors.forEach((err, i) => {
      expect(err.details.issues, cases[i]!.join(' ')).toEqual([expect.objectContaining({ path: 'wallet' })]);
    });
    expect(await countRows('accounts')).toBe(before);
  });

  it('create: human error output goes to stderr with the code, exit 1', async () => {
    const res = await cliProcess(['accounts', 'create', '--wallet', '0x123']);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/INVALID_PARAMS/);
  });

  it('create: the same wallet twice is WALLET_IN_USE (also in another case and on another EVM chain); one account only', async () => {
    const wallet = `0xaBc${nextWallet().slice(5)}`;
    const first = await ok<AccountJson>(['accounts', 'create', '--wallet', wallet]);
    const before = await countRows('accounts');
    const [again] = await Promise.all([
      fails(['accounts', 'create', '--wallet', wallet], 'WALLET_IN_USE'),
      fails(['accounts', 'create', '--wallet', wallet.toUpperCase().replace('0X', '0x'), '--chain', 'bsc'], 'WALLET_IN_USE'),
    ]);
    expect(again.details.wallet).toBe(wallet.toLowerCase());
    expect(await countRows('accounts')).toBe(before);
    const owners = await db.query('SELECT account_id FROM wallets WHERE address = $1', [wallet.toLowerCase()]);
    expect(owners.rows).toEqual([{ account_id: first.id }]);
  });

  it('show: prints the account as created; an unknown id is NOT_FOUND and a malformed id INVALID_PARAMS (exit 1)', async () => {
    const created = await newFreeAccount();
    const [shown, human] = await Promise.all([
      ok<AccountJson>(['accounts', 'show', created.id]),
      cli(['accounts', 'show', created.id]),
      fails(['accounts', 'show', '00000000-0000-4000-8000-000000000000'], 'NOT_FOUND'),
      fails(['accounts', 'show', 'nope'], 'INVALID_PARAMS'),
    ]);
    expect(shown).toEqual(created);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(created.id);
    expect(human.stdout).toMatch(/\bfree\b/);
    expect(human.stdout).toMatch(/\b150 credits\b/);
    expect(human.stdout).toContain(created.wallets[0]!.address);
  });

  it('set-plan: moves the account to the plan and the balance becomes the new allowance (one plan_change ledger row)', async () => {
    const a = await newFreeAccount();
    await ok(['accounts', 'grant', a.id, '--', '-50']);
    const moved = await ok<AccountJson>(['accounts', 'set-plan', a.id, 'basic']);
    expect(moved).toMatchObject({ id: a.id, plan: 'basic', balance: 5000 });
    expect(moved.period_end).not.toBeNull();
    expect(await ledger(a.id, 'plan_change')).toEqual([{ kind: 'plan_change', delta: 4900, balance_after: 5000 }]);
    const down = await ok<AccountJson>(['accounts', 'set-plan', a.id, 'free']);
    expect(down).toMatchObject({ plan: 'free', balance: 150, period_end: null });
    const err = await fails(['accounts', 'set-plan', a.id, 'platinum'], 'NOT_FOUND');
    expect(err.details.plan).toBe('platinum');
    expect((await ok<AccountJson>(['accounts', 'show', a.id])).plan).toBe('free');
  });

  it("grant: +100 adds, `grant <id> -- -100000` floors the balance at 0, each writing exactly one 'adjust' ledger row", async () => {
    const a = await newFreeAccount();
    const up = await ok<AccountJson>(['accounts', 'grant', a.id, '100']);
    expect(up.balance).toBe(250);
    expect(await ledger(a.id, 'adjust')).toEqual([{ kind: 'adjust', delta: 100, balance_after: 250 }]);

    const down = await ok<AccountJson>(['accounts', 'grant', a.id, '--', '-100000']);
    expect(down.balance).toBe(0);
    expect(await ledger(a.id, 'adjust')).toEqual([
      { kind: 'adjust', delta: 100, balance_after: 250 },
      { kind: 'adjust', delta: -250, balance_after: 0 },
    ]);
    const row = await db.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1', [a.id]);
    expect(row.rows[0]!.balance).toBe(0);
    // The invariant of DESIGN §5: balance = sum of the ledger's deltas.
    expect((await ledger(a.id)).reduce((s, r) => s + r.delta, 0)).toBe(0);
  });

  it('grant: a non-integer amount exits 1 with INVALID_PARAMS and writes no ledger row', async () => {
    const a = await newFreeAccount();
    const before = await countRows('credit_ledger');
    await Promise.all([
      ...['1.5', 'ten', '1e3', '99999999999'].map((amount) => fails(['accounts', 'grant', a.id, amount], 'INVALID_PARAMS')),
      fails(['accounts', 'grant', '00000000-0000-4000-8000-000000000000', '5'], 'NOT_FOUND'),
    ]);
    expect(await countRows('credit_ledger')).toBe(before);
    expect((await ok<AccountJson>(['accounts', 'show', a.id])).balance).toBe(150);
  });

  it("suspend: the account's keys then get 403 ACCOUNT_SUSPENDED from the running service", async () => {
    const a = await newFreeAccount();
    const k = await ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'to-suspend']);
    expect((await ping(k.key!)).status).toBe(200);
    const suspended = await ok<AccountJson>(['accounts', 'suspend', a.id]);
    expect(suspended).toMatchObject({ id: a.id, status: 'suspended' });
    await expectRejectedWithinTtl(k.key!, 403, 'ACCOUNT_SUSPENDED');
  });
});

describe('cryptomcp keys', { timeout: 120_000 }, () => {
  it('create: prints a plaintext key once, matching cmcp_ + 38 base62, which works with the MCP SDK client against the running service', async () => {
    const a = await newFreeAccount();
    const res = await cliProcess(['--json', 'keys', 'create', '--account', a.id, '--name', 'laptop', '--description', 'my laptop']);
    expect(res.code, res.stderr).toBe(0);
    const k = JSON.parse(res.stdout) as KeyJson;
    expect(k.key).toMatch(KEY_RE);
    expect(occurrences(res.stdout, k.key!)).toBe(1);
    expect(k).toMatchObject({
      account_id: a.id,
      prefix: k.key!.slice(0, 11),
      name: 'laptop',
      description: 'my laptop',
      servers: null,
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    });
    expect(k.id).toMatch(UUID_RE);

    const client = await mcpClient(svc.url, 'market-intelligence', k.key!);
    try {
      const result = await client.callTool({ name: 'get_usage', arguments: {} });
      const env = result.structuredContent as { success: boolean; data: { plan: string; balance: number } };
      expect(env.success).toBe(true);
      expect(env.data).toMatchObject({ plan: 'free', balance: 150 });
    } finally {
      await client.close();
    }
  });

  it('create (human output): readable, says it is shown once, and contains the working key exactly once', async () => {
    const a = await newFreeAccount();
    const res = await cli(['keys', 'create', '--account', a.id, '--name', 'ci']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/shown only once/i);
    const keys = res.stdout.match(/cmcp_[0-9A-Za-z]{38}/g) ?? [];
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    expect(res.stdout.split('\n').map((l) => l.trim())).toContain(key);
    expect(res.stdout).toContain('ci');
    expect((await ping(key)).status).toBe(200);
  });

  it('create --servers a,b --expires <date>: the key is scoped and expires as asked', async () => {
    const a = await newFreeAccount();
    const soon = new Date(Date.now() + 60_000);
    const [k, timed] = await Promise.all([
      ok<KeyJson>([
        'keys', 'create', '--account', a.id, '--name', 'scoped',
        '--servers', 'kol-analytics, whale-intelligence', '--expires', '2099-12-31',
      ]),
      ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'timed', '--expires', soon.toISOString()]),
    ]);
    expect(timed.expires_at).toBe(soon.toISOString());
    expect(k.servers).toEqual(['kol-analytics', 'whale-intelligence']);
    expect(k.expires_at).toBe('2099-12-31T00:00:00.000Z');
    expect((await ping(k.key!, 'kol-analytics')).status).toBe(200);
    const outside = await ping(k.key!, 'market-intelligence');
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({
      error: { code: 'KEY_SCOPE_FORBIDDEN', details: { server: 'market-intelligence', allowed_servers: ['kol-analytics', 'whale-intelligence'] } },
    });

  });

  it('create: invalid settings and a full account exit 1 with a coded error and create no key', async () => {
    const a = await newFreeAccount();
    const before = await countRows('api_keys');
    const [servers, past, vague, long] = await Promise.all([
      fails(['keys', 'create', '--account', a.id, '--name', 'x', '--servers', 'kol-analytics,nope'], 'INVALID_PARAMS'),
      fails(['keys', 'create', '--account', a.id, '--name', 'x', '--expires', '2020-01-01'], 'INVALID_PARAMS'),
      fails(['keys', 'create', '--account', a.id, '--name', 'x', '--expires', 'next week'], 'INVALID_PARAMS'),
      fails(['keys', 'create', '--account', a.id, '--name', 'x'.repeat(65)], 'INVALID_PARAMS'),
      fails(['keys', 'create', '--account', '00000000-0000-4000-8000-000000000000', '--name', 'x'], 'NOT_FOUND'),
    ]);
    expect(servers.details.issues).toEqual([expect.objectContaining({ path: 'servers.1' })]);
    // The message names the bad server and every valid one, not "The tool arguments are invalid."
    expect(servers.message).toContain('"nope"');
    for (const name of SERVER_NAMES) expect(servers.message).toContain(name);
    expect(past.details.issues).toEqual([expect.objectContaining({ path: 'expires_at' })]);
    expect(vague.details.issues).toEqual([expect.objectContaining({ path: 'expires_at' })]);
    expect(long.details.issues).toEqual([expect.objectContaining({ path: 'name' })]);
    expect(await countRows('api_keys')).toBe(before);

    // Three at once, each on its own connection: the cap holds across concurrent CLI runs.
    await Promise.all([0, 1, 2].map((i) => ok(['keys', 'create', '--account', a.id, '--name', `k${i}`])));
    const full = await fails(['keys', 'create', '--account', a.id, '--name', 'k3'], 'KEY_LIMIT_REACHED');
    expect(full.details.max_keys).toBe(3);
    expect(await countRows('api_keys')).toBe(before + 3);
  });

  it('list: shows every key of the account with its prefix and state, never the plaintext or the hash', async () => {
    const a = await newFreeAccount();
    const made = await Promise.all([
      ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'one']),
      ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'two', '--servers', 'kol-analytics']),
    ]);
    const [list, human, empty] = await Promise.all([
      cli(['--json', 'keys', 'list', '--account', a.id]),
      cli(['keys', 'list', '--account', a.id]),
      newFreeAccount().then((other) => ok<KeyJson[]>(['keys', 'list', '--account', other.id])),
    ]);
    expect(list.code).toBe(0);
    expect(empty).toEqual([]);
    const keys = JSON.parse(list.stdout) as KeyJson[];
    const summary = (rows: [string, string, string, string[] | null][]) => rows.sort((x, y) => x[1].localeCompare(y[1]));
    expect(summary(keys.map((k) => [k.id, k.name, k.prefix, k.servers]))).toEqual(
      summary(made.map((k) => [k.id, k.name, k.key!.slice(0, 11), k.servers])),
    );
    const hashes = await db.query<{ hash: Buffer }>('SELECT hash FROM api_keys WHERE account_id = $1', [a.id]);
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split('\n')).toHaveLength(2);
    for (const out of [list.stdout, human.stdout]) {
      for (const k of made) {
        expect(out).not.toContain(k.key!.slice(11)); // the secret part of the key
        expect(out).toContain(k.key!.slice(0, 11));
      }
      for (const { hash } of hashes.rows) {
        expect(out).not.toContain(hash.toString('hex'));
        expect(out).not.toContain(hash.toString('base64'));
      }
    }
    for (const k of keys) {
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('hash');
    }
  });

  it('revoke: the key then gets 401 API_KEY_REVOKED from the running service, and the list shows it revoked', async () => {
    const a = await newFreeAccount();
    const [k, keep] = await Promise.all([
      ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'doomed']),
      ok<KeyJson>(['keys', 'create', '--account', a.id, '--name', 'kept']),
    ]);
    expect((await ping(k.key!)).status).toBe(200);
    const revoked = await ok<KeyJson>(['keys', 'revoke', k.id]);
    expect(revoked.id).toBe(k.id);
    expect(revoked.revoked_at).not.toBeNull();
    expect(revoked).not.toHaveProperty('key');
    await expectRejectedWithinTtl(k.key!, 401, 'API_KEY_REVOKED');
    expect((await ping(keep.key!)).status).toBe(200);
    const listed = await ok<KeyJson[]>(['keys', 'list', '--account', a.id]);
    expect(listed.find((x) => x.id === k.id)!.revoked_at).toBe(revoked.revoked_at);
    expect(listed.find((x) => x.id === keep.id)!.revoked_at).toBeNull();
    await Promise.all([
      fails(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], 'NOT_FOUND'),
      fails(['keys', 'revoke', 'not-a-uuid'], 'INVALID_PARAMS'),
    ]);
  });
});
