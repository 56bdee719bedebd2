// The layout's import boundaries are lint rules (DESIGN.md §2), and they bite: ESLint, with the
// project's own config, refuses a deliberate violation and accepts the allowed import beside it.
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

// The first lint builds the type-aware program (seconds on a loaded machine); later ones reuse it.
beforeAll(async () => {
  await eslint.lintText('export {};\n', { filePath: 'server/mcp/registry.ts' });
}, 120_000);

async function errorsFor(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('the tool contract (server/mcp/) imports nothing from the app', () => {
  it.each([
    ["import { ApiError } from '../errors.ts';", 'app code'],
    ["import type { Meter } from '../metering/meter.ts';", 'metering'],
    ["import Fastify from 'fastify';", 'Fastify'],
    ["import pg from 'pg';", 'pg'],
    ["import type { MCPServerSpec } from '../../operator/api/types.ts';", 'the operator, as everywhere in server/'],
  ])('refuses %s (%s)', async (line) => {
    expect(await errorsFor('server/mcp/registry.ts', `${line}\nexport const used = 1;\n`)).not.toEqual([]);
  });

  it('accepts its own modules and the SDK', async () => {
    const code = "import type { Tool } from '@modelcontextprotocol/server';\nimport type { ServerName } from './names.ts';\nexport type T = [Tool, ServerName];\n";
    expect(await errorsFor('server/mcp/registry.ts', code)).toEqual([]);
  });
});

describe('the nine servers see only ServerDeps and servers/common/', () => {
  it.each([
    ["import Fastify from 'fastify';", 'Fastify'],
    ["import pg from 'pg';", 'pg'],
    ["import { marketTools } from '../market-intelligence/market.ts';", 'another server'],
    ["import { GitHubClient } from '../../providers/github/live.ts';", 'a concrete provider, as a value'],
    ["import { SqlWatchStore } from '../../watchlists/store.ts';", 'a SQL store'],
    ["import { SqlForecastLog } from '../../forecasts/store.ts';", 'another SQL store'],
    ["import { openDatabase } from '../../db/pool.ts';", 'the database'],
    ["import { authenticate } from '../../gateway/authenticate.ts';", 'the gateway'],
    ["import type { MCPServerSpec } from '../../../operator/api/types.ts';", 'the operator'],
    ["import { createComputePool } from '../../compute/pool.ts';", 'the compute pool itself (servers get it in ServerDeps)'],
  ])('refuses %s (%s)', async (line) => {
    expect(await errorsFor('server/servers/project-intelligence/tools.ts', `${line}\nexport const used = 1;\n`)).not.toEqual([]);
  });

  it('accepts providers\' types.ts values, concrete modules as types, common code and the tool contract', async () => {
    const code = [
      "import { REPO_PATTERN } from '../../providers/github/types.ts';",
      "import type { GitHubClient } from '../../providers/github/live.ts';",
      "import { MAX_WATCHES_PER_ACCOUNT } from '../../watchlists/types.ts';",
      "import { page } from '../common/paging.ts';",
      "import { defineTool } from '../../mcp/tool.ts';",
      "import type { ComputePool } from '../../compute/types.ts';",
      'export const used = [REPO_PATTERN, MAX_WATCHES_PER_ACCOUNT, page, defineTool];',
      'export type T = [GitHubClient, ComputePool];',
      '',
    ].join('\n');
    expect(await errorsFor('server/servers/project-intelligence/tools.ts', code)).toEqual([]);
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

describe('no arrow points up', () => {
  it.each([
    ['server/analytics/mentions.ts', "import type { AssetEntry } from '../providers/market/types.ts';"],
    ['server/analytics/candles.ts', "import { ApiError } from '../errors.ts';"],
    ['server/providers/http.ts', "import { page } from '../servers/common/paging.ts';"],
    ['server/providers/market/live.ts', "import type { GatewayOptions } from '../../gateway/plugin.ts';"],
    ['server/errors.ts', "import { ProviderError } from './providers/market/types.ts';"],
    // The compute pool's threads load only pure code: nothing of the app may reach a worker.
    ['server/compute/tasks.ts', "import { SnapshotProvider } from '../providers/market/snapshot.ts';"],
    ['server/compute/worker.ts', "import { resolveAsset } from '../servers/common/assets.ts';"],
    ['server/compute/pool.ts', "import type { Meter } from '../metering/meter.ts';"],
  ])('%s refuses %s', async (file, line) => {
    expect(await errorsFor(file, `${line}\nexport const used = 1;\n`)).not.toEqual([]);
  });

  it('compute may use analytics/, lib/ and errors.ts', async () => {
    const code = "import { backtest } from '../analytics/forecast.ts';\nimport { addDays } from '../lib/dates.ts';\nimport { ApiError } from '../errors.ts';\nexport const used = [backtest, addDays, ApiError];\n";
    expect(await errorsFor('server/compute/tasks.ts', code)).toEqual([]);
  });

  it('analytics may use lib/, providers may use analytics and errors.ts', async () => {
    expect(await errorsFor('server/analytics/tvl.ts', "import { addDays } from '../lib/dates.ts';\nexport const used = addDays;\n")).toEqual([]);
    expect(await errorsFor('server/providers/market/types.ts', "import type { DailyCandle } from '../../analytics/candles.ts';\nimport { ProviderError } from '../../errors.ts';\nexport type T = DailyCandle;\nexport const used = ProviderError;\n")).toEqual([]);
  });
});
