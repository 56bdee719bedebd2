// The layout's import boundaries are lint rules (DESIGN.md §2), and they bite: ESLint, with the
// project's own config, refuses a deliberate violation and accepts the allowed import beside it.
// server/'s layers are allow-lists (LAYERS in eslint.config.js): each probe below imports one
// thing its layer's list leaves out and must be refused.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The project's ESLint config builds no type program (the one type-aware rule is oxlint's), so a
// probe may stand in a folder that does not exist yet (server/compute/). Only the rules under
// test run.
const IMPORT_RULES = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports', 'boundaries/dependencies']);
const eslint = new ESLint({
  cwd: process.cwd(),
  ruleFilter: ({ ruleId }) => IMPORT_RULES.has(ruleId) || ruleId === 'no-restricted-properties',
});

/** The import rules' errors for a probe, as the ids of the rules that raised them. */
async function errorsFor(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  const messages = result?.messages ?? [];
  // A parse error would make every probe "refused" for the wrong reason.
  expect(messages.filter((m) => m.fatal)).toEqual([]);
  return messages.flatMap((m) => (m.ruleId !== null && IMPORT_RULES.has(m.ruleId) ? [m.ruleId] : []));
}

// Layer probes are refused by the allow-lists; package and operator probes by no-restricted-imports.
const refused = async (file: string, line: string, rule = 'boundaries/dependencies') =>
  expect(await errorsFor(file, `${line}\nexport const used = 1;\n`)).toContain(rule);
const accepted = async (file: string, lines: string[]) => expect(await errorsFor(file, `${lines.join('\n')}\nexport const used = 1;\n`)).toEqual([]);

const A_SERVER = 'server/servers/project-intelligence/tools.ts';

describe('the twelve forbidden imports of issue 31 fail lint', () => {
  it.each([
    [A_SERVER, "import { buildApp } from '../../app.ts';"],
    [A_SERVER, "import { startService } from '../../runtime.ts';"],
    [A_SERVER, "import { loadConfig } from '../../config.ts';"],
    [A_SERVER, "import { Payments } from '../../payments/orders.ts';"],
    [A_SERVER, "import { connectionCreate } from '../../oauth/store.ts';"],
    [A_SERVER, "import { createFacilitator } from '../../x402/facilitator.ts';"],
    ['server/metering/meter.ts', "import { route } from '../gateway/route.ts';"],
    ['server/metering/meter.ts', "import { serverModules } from '../servers/index.ts';"],
    ['server/keys/store.ts', "import { route } from '../gateway/route.ts';"],
    ['server/keys/resolver.ts', "import { serverModules } from '../servers/index.ts';"],
    ['server/accounts/accounts.ts', "import { route } from '../gateway/route.ts';"],
    ['server/accounts/plans.ts', "import { serverModules } from '../servers/index.ts';"],
  ])('%s refuses %s', async (file, line) => {
    await refused(file, line);
  });

  it('refuses them as type-only imports too, where a layer is not allowed types either', async () => {
    await refused(A_SERVER, "import type { AppDeps } from '../../app.ts';");
    await refused('server/metering/meter.ts', "import type { GatewayDeps } from '../gateway/plugin.ts';");
  });
});

describe('the tool contract (server/mcp/) imports nothing from the app', () => {
  it.each([
    ["import { ApiError } from '../errors.ts';", 'app code'],
    ["import type { Meter } from '../metering/meter.ts';", 'metering'],
    ["import { addDays } from '../lib/dates.ts';", 'not even lib/'],
    ["import Fastify from 'fastify';", 'Fastify', 'no-restricted-imports'],
    ["import pg from 'pg';", 'pg', 'no-restricted-imports'],
    ["import type { MCPServerSpec } from '../../operator/api/types.ts';", 'the operator, as everywhere in server/', 'no-restricted-imports'],
  ])('refuses %s (%s)', async (line, _why, rule?: string) => {
    await refused('server/mcp/registry.ts', line, rule);
  });

  it('accepts its own modules and the SDK', async () => {
    await accepted('server/mcp/registry.ts', ["import type { Tool } from '@modelcontextprotocol/server';", "import type { ServerName } from './names.ts';"]);
  });
});

describe('the nine servers see only the tool contract, analytics, lib, servers/common and what ServerDeps hands them', () => {
  it.each([
    ["import Fastify from 'fastify';", 'Fastify', 'no-restricted-imports'],
    ["import pg from 'pg';", 'pg', 'no-restricted-imports'],
    ["import { marketTools } from '../market-intelligence/market.ts';", 'another server'],
    ["import type { MarketTools } from '../market-intelligence/market.ts';", 'another server, even as a type'],
    ["import { GitHubClient } from '../../providers/github/live.ts';", 'a concrete provider, as a value'],
    ["import { SqlWatchStore } from '../../watchlists/store.ts';", 'a SQL store'],
    ["import { SqlForecastLog } from '../../forecasts/store.ts';", 'another SQL store'],
    ["import { openDatabase } from '../../db/pool.ts';", 'the database'],
    ["import type { Database } from '../../db/pool.ts';", 'the database, even as a type'],
    ["import { authenticate } from '../../gateway/authenticate.ts';", 'the gateway'],
    ["import type { Meter } from '../../metering/meter.ts';", 'metering, even as a type'],
    ["import { serverModules } from '../index.ts';", 'the assembly of all servers'],
    ["import { ApiError } from '../../../test/helpers/service.ts';", 'anything outside every layer'],
    ["import type { MCPServerSpec } from '../../../operator/api/types.ts';", 'the operator', 'no-restricted-imports'],
  ])('refuses %s (%s)', async (line, _why, rule?: string) => {
    await refused(A_SERVER, line, rule);
  });

  it('accepts providers\' types.ts values, concrete modules as types, common code, deps.ts and the tool contract', async () => {
    await accepted(A_SERVER, [
      "import { REPO_PATTERN } from '../../providers/github/types.ts';",
      "import type { GitHubClient } from '../../providers/github/live.ts';",
      "import { MAX_WATCHES_PER_ACCOUNT } from '../../watchlists/types.ts';",
      "import type { SqlForecastLog } from '../../forecasts/store.ts';",
      "import { page } from '../common/paging.ts';",
      "import type { ServerDeps } from '../deps.ts';",
      "import { defineTool } from '../../mcp/tool.ts';",
      "import { ApiError } from '../../errors.ts';",
      "import { addDays } from '../../lib/dates.ts';",
      "import { annualizedVolatility } from '../../analytics/risk.ts';",
    ]);
  });

  it('servers/common/ is held to the same list and never imports a server', async () => {
    await refused('server/servers/common/assets.ts', "import { marketTools } from '../market-intelligence/market.ts';");
    await refused('server/servers/common/assets.ts', "import { loadConfig } from '../../config.ts';");
    await accepted('server/servers/common/assets.ts', ["import type { AssetEntry } from '../../providers/market/types.ts';"]);
  });

  it('servers/index.ts assembles the nine but reaches no further than they do', async () => {
    await accepted('server/servers/index.ts', ["import { marketIntelligence } from './market-intelligence/index.ts';"]);
    await refused('server/servers/index.ts', "import { openDatabase } from '../db/pool.ts';");
  });
});

describe('every other layer of server/ imports only what its list names', () => {
  it.each([
    // The bottom.
    ['server/lib/dates.ts', "import { VERSION } from '../version.ts';"],
    ['server/analytics/mentions.ts', "import type { AssetEntry } from '../providers/market/types.ts';"],
    ['server/analytics/candles.ts', "import { ApiError } from '../errors.ts';"],
    ['server/telemetry/tracing.ts', "import { ApiError } from '../errors.ts';"],
    ['server/db/pool.ts', "import { Meter } from '../metering/meter.ts';"],
    // The compute pool (server/compute/, which another branch adds): analytics, lib, mcp types, errors.ts.
    ['server/compute/pool.ts', "import { route } from '../gateway/route.ts';"],
    ['server/compute/pool.ts', "import type { ServerDeps } from '../servers/deps.ts';"],
    ['server/compute/worker.ts', "import { defineTool } from '../mcp/tool.ts';"],
    // Providers.
    ['server/providers/http.ts', "import { page } from '../servers/common/paging.ts';"],
    ['server/providers/market/live.ts', "import type { GatewayOptions } from '../../gateway/plugin.ts';"],
    ['server/providers/market/live.ts', "import { upstreamSpan } from '../../telemetry/tracing.ts';"],
    ['server/providers/evm/chains.ts', "import { openDatabase } from '../../db/pool.ts';"],
    // The stores.
    ['server/keys/resolver.ts', "import { AccountIdSchema } from '../accounts/accounts.ts';"],
    ['server/metering/usage.ts', "import { defineTool } from '../mcp/tool.ts';"],
    ['server/accounts/accounts.ts', "import { SERVER_NAMES } from '../mcp/names.ts';"],
    ['server/forecasts/store.ts', "import { marketTools } from '../servers/market-intelligence/market.ts';"],
    ['server/watchlists/store.ts', "import { KeyStore } from '../keys/store.ts';"],
    // The request path.
    ['server/gateway/plugin.ts', "import { Payments } from '../payments/orders.ts';"],
    ['server/gateway/authenticate.ts', "import { serverModules } from '../servers/index.ts';"],
    ['server/x402/plugin.ts', "import { Payments } from '../payments/orders.ts';"],
    ['server/payments/orders.ts', "import { route } from '../gateway/route.ts';"],
    ['server/oauth/tokens.ts', "import { route } from '../gateway/route.ts';"],
    ['server/oauth/server.ts', "import { credentialStatus } from '../dashboard/body.ts';"],
    ['server/dashboard/api.ts', "import { route } from '../gateway/route.ts';"],
    ['server/devnet/devnet.ts', "import { Payments } from '../payments/orders.ts';"],
    // server/'s own files.
    ['server/config.ts', "import { openDatabase } from './db/pool.ts';"],
    ['server/metrics.ts', "import { route } from './gateway/route.ts';"],
    ['server/connections.ts', "import { route } from './gateway/route.ts';"],
    ['server/demo.ts', "import { route } from './gateway/route.ts';"],
    ['server/origin.ts', "import { openDatabase } from './db/pool.ts';"],
    ['server/public-types.ts', "import { openDatabase } from './db/pool.ts';"],
    ['server/errors.ts', "import { ProviderError } from './providers/market/types.ts';"],
    // server/'s own files are held to their lists among themselves too.
    ['server/origin.ts', "import { loadConfig } from './config.ts';"],
    ['server/version.ts', "import { ApiError } from './errors.ts';"],
    ['server/metrics.ts', "import { startService } from './runtime.ts';"],
    ['server/config.ts', "import { buildApp } from './app.ts';"],
    // A folder no list declares can import nothing until it is given one.
    ['server/newroom/thing.ts', "import { addDays } from '../lib/dates.ts';"],
  ])('%s refuses %s', async (file, line) => {
    await refused(file, line);
  });

  it('accepts what the lists name', async () => {
    await accepted('server/analytics/tvl.ts', ["import { addDays } from '../lib/dates.ts';"]);
    await accepted('server/compute/worker.ts', [
      "import { annualizedVolatility } from '../analytics/risk.ts';",
      "import type { ToolContext } from '../mcp/tool.ts';",
      "import { ApiError } from '../errors.ts';",
    ]);
    await accepted('server/providers/market/types.ts', ["import type { DailyCandle } from '../../analytics/candles.ts';", "import { ProviderError } from '../../errors.ts';"]);
    await accepted('server/providers/http.ts', ["import { upstreamSpan } from '../telemetry/tracing.ts';"]);
    await accepted('server/metering/meter.ts', ["import type { Database } from '../db/pool.ts';", "import { ApiError } from '../errors.ts';"]);
    await accepted('server/gateway/plugin.ts', [
      "import type { Meter } from '../metering/meter.ts';",
      "import type { KeyResolver } from '../keys/resolver.ts';",
      "import { SERVER_NAMES } from '../mcp/names.ts';",
      "import { inSpan } from '../telemetry/tracing.ts';",
    ]);
    await accepted('server/runtime.ts', [
      "import { buildApp } from './app.ts';",
      "import { Payments } from './payments/orders.ts';",
      "import { serverModules } from './servers/index.ts';",
    ]);
    await accepted('server/config.ts', ["import { PAYMENT_CHAIN_NAMES } from './public-types.ts';", "import { DEFAULT_RPC_URLS } from './providers/evm/types.ts';"]);
    // Inside a folder anything goes.
    await accepted('server/providers/evm/explorer.ts', ["import { fetchJson } from '../http.ts';"]);
  });
});

describe('process.env is read only in config modules', () => {
  const envErrors = async (filePath: string) => {
    const [result] = await eslint.lintText('export const port = process.env.PORT;\n', { filePath });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-properties');
  };

  it.each(['server/runtime.ts', 'server/telemetry/start.ts', 'operator/main.ts'])('refuses it in %s', async (file) => {
    expect(await envErrors(file)).not.toEqual([]);
  });

  it.each(['server/config.ts', 'server/telemetry/config.ts', 'operator/config.ts'])('accepts it in %s', async (file) => {
    expect(await envErrors(file)).toEqual([]);
  });
});
