#!/usr/bin/env -S node --max-old-space-size=256
// The `cryptomcp` command. Every command but `serve` opens the database (DATABASE_URL, or the
// embedded server under DATA_DIR, joining it if `npm start` is already running it), makes sure
// migrations are current (applying them only on the embedded database; against DATABASE_URL that
// is `cryptomcp migrate`'s job, and a command refuses a schema that is behind), does one thing,
// prints it (or JSON with --json) and exits.
// runCli() runs one command line in process (the tests do; `serve` and `devnet` still own the
// process: they stay up and exit on a signal).
// First, so tracing (when OTEL_* asks for it) is in place before anything it instruments loads.
import './telemetry/register.ts';
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { accountCreate, accountGet, accountGrant, accountSetPlan, accountSetStatus, CHAINS, type Account, type Chain } from './accounts/accounts.ts';
import { planList } from './accounts/plans.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { migrate, migrationsCurrent } from './db/migrate.ts';
import { openDatabase, type Database } from './db/pool.ts';
import { banner, ensureDemoAccount } from './demo.ts';
import { ApiError, toApiError } from './errors.ts';
import { keyCreate, keyListByAccount, keyRevoke, type ApiKey } from './keys/store.ts';
import { VERSION } from './version.ts';
import { SERVER_NAMES, type ServerName } from './mcp/names.ts';
import { otelEnv } from './telemetry/config.ts';
import { describeTracing, shutdownTelemetry } from './telemetry/start.ts';

/** Where a command line's output goes and what environment it reads. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Unset: the process's environment. */
  env?: NodeJS.ProcessEnv;
}

const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Runs one administrative action against the database and closes it. */
async function withDb<T>(c: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: c.databaseUrl, dataDir: c.dataDir, max: 2, statementTimeoutMs: c.databaseStatementTimeoutMs });
  try {
    if (!c.databaseUrl) await migrate(db.pool);
    else if (!(await migrationsCurrent(db.pool))) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The database schema is behind this version: run `cryptomcp migrate` first.');
    }
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** A single-quoted shell word: pastes as is into sh or bash, whatever the value holds. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `--servers a,b`: the names, or INVALID_PARAMS naming each unknown one and the valid ones. */
function serverList(value: string): ServerName[] {
  const names = value.split(',').map((s) => s.trim());
  const issues = names.flatMap((name, i) =>
    (SERVER_NAMES as readonly string[]).includes(name) ? [] : [{ path: `servers.${i}`, message: `unknown server "${name}"` }],
  );
  if (issues.length > 0) {
    const unknown = names.filter((n) => !(SERVER_NAMES as readonly string[]).includes(n));
    throw new ApiError('INVALID_PARAMS', `--servers: unknown server${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; valid servers: ${SERVER_NAMES.join(', ')}`, {
      issues,
      valid: [...SERVER_NAMES],
    });
  }
  return names as ServerName[];
}

function describeAccount(a: Account): string {
  return [
    `account  ${a.id}`,
    `plan     ${a.plan}${a.status === 'active' ? '' : ` (${a.status})`}`,
    `balance  ${a.balance} credits`,
    `period   since ${a.period_start.toISOString()}${a.period_end ? `, renews ${a.period_end.toISOString()}` : ' (one-time, never renews)'}`,
    ...a.wallets.map((w) => `wallet   ${w.chain} ${w.address}`),
  ].join('\n');
}

function describeKey(k: ApiKey): string {
  const state = k.revoked_at ? `revoked ${k.revoked_at.toISOString()}` : k.expires_at ? `expires ${k.expires_at.toISOString()}` : 'no expiry';
  return `${k.id}  ${k.prefix}…  ${k.name}  [${k.servers?.join(',') ?? 'all servers'}]  ${state}  last used ${k.last_used_at?.toISOString() ?? 'never'}`;
}

/** The command line parser for one run: commander keeps parsed options on the instance. */
function buildProgram(io: CliIo): { program: Command; json: () => boolean } {
  const program = new Command('cryptomcp')
    .description('Credit-metered crypto data MCP servers: run the service and administer accounts and keys.')
    .version(VERSION)
    .option('--json', 'print machine-readable JSON')
    // Usage errors come back as CommanderError, so --json can report them as coded errors too.
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => (json() ? undefined : io.stderr(text)) })
    .showHelpAfterError();

  function json(): boolean {
    return program.opts<{ json?: boolean }>().json === true;
  }

  function config(): Config {
    return loadConfig(io.env);
  }

  function print(value: unknown, human: () => string): void {
    io.stdout(`${json() ? JSON.stringify(value, null, 2) : human()}\n`);
  }

  program
    .command('serve')
    .description('serve the MCP servers on PORT (embedded PostgreSQL unless DATABASE_URL is set)')
    .option('--demo', 'on a fresh database, create a demo account and print its key (npm start does)')
    .action(async (opts: { demo?: boolean }) => {
      const c = config();
      // Loaded here, not at the top: the administrative commands below never load the service.
      const { startService } = await import('./runtime.ts');
      const service = await startService(c, {
        logger: c.logLevel === 'silent' ? false : { level: c.logLevel },
        log: (line) => io.stderr(`${line}\n`),
      });
      let demo: Awaited<ReturnType<typeof ensureDemoAccount>>;
      if (opts.demo || c.demoAccount) {
        demo = await ensureDemoAccount(service.db).catch((err: unknown) => {
          io.stderr(`demo account not created: ${(err as Error).message}\n`);
          return undefined;
        });
      }
      // PUBLIC_BASE_URL, else the URL it listens on: the same origin sign-in and OAuth name.
      const baseUrl = service.publicBaseUrl;
      if (json()) {
        // One line, so a supervisor or test can read it as soon as the service is ready.
        const ready = { url: baseUrl, port: service.port, metrics_port: service.metricsPort, tracing: describeTracing(otelEnv()), servers: c.servers, demo_key: demo?.key ?? null, demo_account: demo?.account.id ?? null };
        io.stdout(`${JSON.stringify(ready)}\n`);
      } else {
        io.stdout(
          `${banner({ baseUrl, metricsPort: service.metricsPort, database: service.db.description, tracing: describeTracing(otelEnv()), servers: c.servers, demo })}\n`,
        );
      }
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        io.stderr(`${signal}: draining in-flight requests and stopping\n`);
        service
          .close()
          .then(() => shutdownTelemetry())
          .then(
            () => process.exit(0),
            (err: unknown) => {
              io.stderr(`shutdown failed: ${(err as Error).message}\n`);
              process.exit(1);
            },
          );
      };
      // `on`, not `once`: a second signal (npm forwards Ctrl-C too) must not kill the process
      // before the drain and the database shutdown finish; stop() runs once.
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });

  program
    .command('devnet')
    .description('start a local EVM node (anvil) seeded with tokens, transfers and labelled accounts; Ctrl-C stops it')
    .option('--port <port>', 'RPC port (default: a free port)', (v) => Number(v))
    .action(async (opts: { port?: number }) => {
      const { devnetSettlementKey, startDevnet } = await import('./devnet/devnet.ts');
      const devnet = await startDevnet({ port: opts.port });
      const file = path.join(config().dataDir, 'devnet', 'manifest.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(devnet.manifest, null, 2)}\n`);
      const m = devnet.manifest;
      // What to set to serve on the devnet: its tokens and labels (the manifest), its USDC on
      // "ethereum" (the wallet is asked to switch to the devnet's chain id) with one confirmation,
      // and x402 on the same token, settled with the issuer's funded key.
      const paymentEnv = {
        ETHEREUM_RPC_URL: m.rpc_url,
        DEVNET_MANIFEST: file,
        PAYMENT_CHAINS: JSON.stringify({ ethereum: { treasury: m.payments.treasury.address, token: m.payments.usdc.address, chain_id: m.chain_id, confirmations: 1 } }),
        X402_PAY_TO: m.payments.treasury.address,
        X402_NETWORK: `eip155:${m.chain_id}`,
        X402_ASSET: m.payments.usdc.address,
        X402_RPC_URL: m.rpc_url,
        X402_SETTLEMENT_KEY: devnetSettlementKey(),
      };
      print({ rpc_url: m.rpc_url, chain_id: m.chain_id, manifest: file, payment_env: paymentEnv }, () =>
        [
          `devnet: anvil at ${m.rpc_url} (chain id ${m.chain_id}), seeded with ${m.tokens.length} tokens and ${m.transfers.length} transfers`,
          ...m.tokens.map((t) => `  ${t.symbol.padEnd(5)} ${t.address}  ${t.kind}, ${t.decimals} decimals`),
          ...m.accounts.map((a) => `  ${a.address}  ${a.label} (${a.kind})`),
          `payments: USDC (EIP-3009, domain "${m.payments.usdc.eip712.name}" v${m.payments.usdc.eip712.version}, 6 decimals) at ${m.payments.usdc.address}`,
          `  treasury ${m.payments.treasury.address} (test mnemonic index ${m.payments.treasury.mnemonic_index}): set it as the chain ${m.chain_id} treasury`,
          ...m.payments.payers.map((p) => `  payer    ${p.address} (index ${p.mnemonic_index}): ${Number(p.usdc) / 1e6} USDC and 100 ETH`),
          `manifest (addresses, labels, transfers, balances, payments): ${file}`,
          '',
          'to serve on the devnet (on-chain tools and payments), paste this into the shell you run `npm start` from:',
          '',
          '  # X402_SETTLEMENT_KEY is test mnemonic index 10 (the USDC issuer, funded for gas): a public devnet-only key',
          ...Object.entries(paymentEnv).map(([k, v]) => `  export ${k}=${shellQuote(v)}`),
          '',
          'Ctrl-C stops the node.',
        ].join('\n'),
      );
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        devnet.stop().then(() => process.exit(0), () => process.exit(1));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const c = config();
      const db = await openDatabase({ databaseUrl: c.databaseUrl, dataDir: c.dataDir, max: 2 });
      try {
        const applied = await migrate(db.pool);
        print({ applied }, () => (applied.length ? `applied migrations ${applied.join(', ')}` : 'migrations are current'));
      } finally {
        await db.close();
      }
    });

  const plans = program.command('plans').description('plans and their limits');
  plans
    .command('list')
    .description('list plans')
    .action(async () => {
      const list = await withDb(config(), (db) => planList(db));
      print(list, () =>
        list
          .map((p) => `${p.name.padEnd(10)} ${String(p.credits).padStart(6)} credits  ${p.renewal.padEnd(8)}  ${p.requests_per_minute}/min burst ${p.burst}  max keys ${p.max_keys}  servers ${p.servers.length === SERVER_NAMES.length ? 'all' : p.servers.join(',')}`)
          .join('\n'),
      );
    });

  const accounts = program.command('accounts').description('accounts, plans and credits');
  accounts
    .command('create')
    .description('create an account for a wallet')
    .requiredOption('--wallet <address>', 'wallet address (0x… for EVM chains, base58 for Solana)')
    .addOption(new Option('--chain <chain>', 'chain of the wallet').choices(CHAINS).default('ethereum'))
    .option('--plan <plan>', 'plan name', 'free')
    .action(async (opts: { wallet: string; chain: Chain; plan: string }) => {
      const account = await withDb(config(), (db) => accountCreate(db, { wallet: opts.wallet, chain: opts.chain, plan: opts.plan }));
      print(account, () => describeAccount(account));
    });
  accounts
    .command('show <id>')
    .description('show an account')
    .action(async (id: string) => {
      const account = await withDb(config(), (db) => accountGet(db, id));
      if (!account) throw new ApiError('NOT_FOUND', `No account ${id}.`, { account: id });
      print(account, () => describeAccount(account));
    });
  accounts
    .command('set-plan <id> <plan>')
    .description('move an account to a plan (a new period starts with its allowance)')
    .action(async (id: string, plan: string) => {
      const account = await withDb(config(), (db) => accountSetPlan(db, id, plan));
      print(account, () => describeAccount(account));
    });
  accounts
    .command('grant <id> <credits>')
    .description('add credits (negative deducts, never below zero: grant <id> -- -100)')
    .action(async (id: string, credits: string) => {
      if (!/^-?\d+$/.test(credits)) throw new ApiError('INVALID_PARAMS', 'credits must be an integer', { issues: [{ path: 'credits', message: 'expected an integer' }] });
      const account = await withDb(config(), (db) => accountGrant(db, id, Number(credits)));
      print(account, () => describeAccount(account));
    });
  accounts
    .command('suspend <id>')
    .description('suspend an account (its keys get 403 within the key cache TTL)')
    .action(async (id: string) => {
      const account = await withDb(config(), (db) => accountSetStatus(db, id, 'suspended'));
      print(account, () => describeAccount(account));
    });
  accounts
    .command('reactivate <id>')
    .description('lift a suspension')
    .action(async (id: string) => {
      const account = await withDb(config(), (db) => accountSetStatus(db, id, 'active'));
      print(account, () => describeAccount(account));
    });

  const keys = program.command('keys').description('API keys');
  keys
    .command('create')
    .description('create an API key; the plaintext is printed once')
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--name <name>', 'key name (1-64 characters)')
    .option('--description <text>', 'what the key is for (up to 500 characters)')
    .option('--expires <date>', 'ISO 8601 date or date-time in the future')
    .option('--servers <list>', `comma list of servers the key may use (default: all): ${SERVER_NAMES.join(',')}`)
    .action(async (opts: { account: string; name: string; description?: string; expires?: string; servers?: string }) => {
      const servers = opts.servers === undefined ? undefined : serverList(opts.servers);
      const { key, plaintext } = await withDb(config(), (db) =>
        keyCreate(db, opts.account, {
          name: opts.name,
          description: opts.description,
          expires_at: opts.expires,
          servers,
        }),
      );
      print({ ...key, key: plaintext }, () => `${describeKey(key)}\n\nAPI key (shown only once):\n${plaintext}`);
    });
  keys
    .command('list')
    .description("list an account's keys")
    .requiredOption('--account <id>', 'account id')
    .action(async (opts: { account: string }) => {
      const list = await withDb(config(), (db) => keyListByAccount(db, opts.account));
      print(list, () => (list.length ? list.map(describeKey).join('\n') : 'no keys'));
    });
  keys
    .command('revoke <key-id>')
    .description('revoke a key (takes effect within the key cache TTL)')
    .action(async (keyId: string) => {
      const key = await withDb(config(), (db) => keyRevoke(db, keyId));
      print(key, () => describeKey(key));
    });
  return { program, json };
}

/**
 * Runs one command line (without `node cli.ts`) and resolves with its exit code. `serve` and
 * `devnet` resolve once they are up and keep running until a signal.
 */
export async function runCli(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const { program, json } = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0; // --help, --version
      if (json()) {
        io.stdout(`${JSON.stringify({ success: false, error: { code: 'INVALID_PARAMS', message: err.message.replace(/^error: /, ''), details: { commander_code: err.code } } }, null, 2)}\n`);
      }
      return err.exitCode;
    }
    if (err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    const apiError = toApiError(err);
    if (apiError.code === 'INTERNAL_ERROR' || apiError.code === 'SERVICE_UNAVAILABLE') {
      io.stderr(`${(err as Error).stack ?? String(err)}\n`);
    }
    if (json()) {
      io.stdout(`${JSON.stringify({ success: false, error: { code: apiError.code, message: apiError.message, details: apiError.details } }, null, 2)}\n`);
    } else {
      io.stderr(`error: ${apiError.code}: ${apiError.message}${Object.keys(apiError.details).length ? ` ${JSON.stringify(apiError.details)}` : ''}\n`);
    }
    return 1;
  }
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2));
  // A failed command exits now; a finished one when nothing is left open (serve never is).
  if (code !== 0) process.exit(code);
}
