// Every project-intelligence tool's real answer, on the offline DefiLlama data, against the output
// schema it declares: projects with and without a TVL history, a family name, one category and all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseName, expectAnswerMatchesOutput, ownTools, type OutputCase } from '../helpers/tool-outputs.ts';
import { toolSuite, type ToolSuite } from '../helpers/tools.ts';

const SERVER = 'project-intelligence';
let suite: ToolSuite;

beforeAll(async () => {
  suite = await toolSuite(SERVER, 10_000);
}, 120_000);
afterAll(async () => {
  await suite?.close();
});

const some = (item: Record<string, unknown> = {}) => expect.arrayContaining([expect.objectContaining(item)]);
const historyStats = expect.objectContaining({ last_tvl_usd: expect.any(Number), max_drawdown: expect.objectContaining({ value: expect.any(Number) }) });

const cases: OutputCase[] = [
  { tool: 'search_projects', args: { category: 'lending', chain: 'solana', min_tvl_usd: 1e8 }, shows: { projects: some() } },
  { tool: 'get_project_profile', args: { project: 'aave v3' }, shows: { token: { id: 'aave' }, listing_2023: expect.anything(), tvl_history: { covered: false } } },
  { tool: 'get_project_profile', label: 'with history', args: { project: 'Kamino Lend' }, shows: { tvl_history: historyStats } },
  { tool: 'get_project_profile', label: 'a family', args: { project: 'aave' }, shows: { resolved_from: { members: some() } } },
  { tool: 'get_tvl_history', args: { project: 'Kamino Lend', from: '2025-01-01', to: '2025-03-31', limit: 60 }, shows: { points: some() } },
  { tool: 'get_tvl_history', label: 'all of DeFi', args: { total: true, limit: 10 } },
  { tool: 'get_tvl_history', label: 'a chain', args: { chain: 'Ethereum', limit: 10 } },
  { tool: 'compare_projects', args: { projects: ['Kamino Lend', 'Aave V3', 'Lido'] }, shows: { projects: some({ history: historyStats }) } },
  { tool: 'get_category_overview', args: { leaders: 3, limit: 10 }, shows: { categories: some() } },
  { tool: 'get_category_overview', label: 'one category', args: { category: 'Lending' }, shows: { category: 'Lending' } },
  { tool: 'get_chain_overview', args: { chain: 'Solana', top: 5 }, shows: { history: historyStats } },
  { tool: 'due_diligence_report', args: { project: 'Kamino Lend' }, shows: { flags: some() } },
  { tool: 'due_diligence_report', label: 'GitHub not configured', args: { project: 'Aave V3', github_repo: 'aave/aave-v3-core' } },
];

describe('project-intelligence answers fit their output schemas', () => {
  it('every tool of the server declares an output schema and has a case here', () => {
    const tools = ownTools(suite, SERVER);
    expect(tools.filter((t) => !t.output).map((t) => t.name)).toEqual([]);
    expect(new Set(cases.map((c) => c.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  it.each(cases.map((c) => [caseName(c), c] as const))('%s', async (_, c) => {
    await expectAnswerMatchesOutput(suite, SERVER, c);
  });
});
