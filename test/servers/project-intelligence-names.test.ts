// Everyday project names resolve to the protocol or its family, governance tokens link where the
// registry's name says so, and a project without a TVL history in the snapshot gives its TVL on the
// listing's day with that day. Handlers called directly on the offline DefiLlama data.
import { describe, expect, it } from 'vitest';
import { callHandler } from '../helpers/handlers.ts';

type Info = {
  name: string;
  tvl_usd: number;
  token: { id: string; symbol: string; linked_by: string } | null;
  tvl_history: { covered: boolean; tvl_usd?: number; as_of?: string; reason?: string };
  resolved_from?: { members: { name: string; tvl_usd: number }[]; chosen: string; rule: string };
};

describe('get_project_profile by everyday name', () => {
  it.each([
    ['aave', 'Aave V3', ['Aave V3', 'Aave V2', 'Aave V1']],
    ['uniswap', 'Uniswap V3', ['Uniswap V3', 'Uniswap V2', 'Uniswap V4', 'Uniswap V1']],
    ['curve', 'Curve DEX', ['Curve DEX', 'Curve LlamaLend']],
    ['maker', 'Sky Lending', ['Sky Lending', 'Sky RWA']],
  ])('"%s" answers for %s, listing the family with each TVL (was 404)', async (query, chosen, members) => {
    const out = await callHandler('project-intelligence', 'get_project_profile', { project: query });
    const d = out.data as Info;
    expect(d.name).toBe(chosen);
    expect(d.resolved_from!.chosen).toBe(chosen);
    const names = d.resolved_from!.members.map((m) => m.name);
    for (const m of members) expect(names).toContain(m);
    const tvls = d.resolved_from!.members.map((m) => m.tvl_usd ?? 0);
    expect(tvls).toEqual([...tvls].sort((a, b) => b - a));
  });

  it('"lido" is Lido itself, linked to its governance token LDO (Lido DAO), the link corroborated by the explorer label putting LDO on lido.fi', async () => {
    const d = (await callHandler('project-intelligence', 'get_project_profile', { project: 'lido' })).data as Info;
    expect(d.name).toBe('Lido');
    expect(d.resolved_from).toBeUndefined();
    expect(d.token?.symbol.toUpperCase()).toBe('LDO');
    expect(d.token?.linked_by).toBe('name_and_website');
  });

  it.each([
    ['aave', 'AAVE'],
    ['uniswap', 'UNI'],
  ])('"%s" links %s with the way the link was made stated', async (query, symbol) => {
    const d = (await callHandler('project-intelligence', 'get_project_profile', { project: query })).data as Info;
    expect(d.token?.symbol.toUpperCase()).toBe(symbol);
    expect(['name_and_website', 'name_only']).toContain(d.token?.linked_by);
  });

  // Issue 35 item 8: renamed projects and token tickers were 404; "maker" had token null though MKR is priced.
  it.each([
    ['EigenLayer', 'EigenCloud', 'renamed itself EigenCloud'],
    ['Solend', 'Save', 'renamed itself Save'],
    ['ldo', 'Lido', 'LDO is the token of Lido'],
  ])('"%s" resolves to %s, the rule saying why', async (query, chosen, why) => {
    const d = (await callHandler('project-intelligence', 'get_project_profile', { project: query })).data as Info;
    expect(d.name).toBe(chosen);
    expect(d.resolved_from!.chosen).toBe(chosen);
    expect(d.resolved_from!.rule).toContain(why);
  });

  it('"maker" links its token MKR (the Maker asset, by the name it was asked for), priced', async () => {
    const d = (await callHandler('project-intelligence', 'get_project_profile', { project: 'maker' })).data as Info & { token: { price_usd: number | null } };
    expect(d.token?.symbol.toUpperCase()).toBe('MKR');
    expect(d.token?.linked_by).toBe('name_only');
    expect(d.token?.price_usd).toBeGreaterThan(0);
  });

  it('a name absent from the data is a 404 suggesting near names', async () => {
    await expect(callHandler('project-intelligence', 'get_project_profile', { project: 'Kaminoo' })).rejects.toMatchObject({ code: 'NOT_FOUND', details: { close_matches: expect.arrayContaining([expect.objectContaining({ name: 'Kamino Lend' })]) } });
  });

  it('a project whose TVL history is not in the snapshot gives its TVL on 2025-12-19 with that date and says so', async () => {
    const d = (await callHandler('project-intelligence', 'get_project_profile', { project: 'Aave V3' })).data as Info;
    expect(d.tvl_history).toMatchObject({ covered: false, tvl_usd: d.tvl_usd, as_of: '2025-12-19' });
    expect(d.tvl_history.reason).toMatch(/not in the snapshot/);
  });
});

describe('dates on project answers', () => {
  it('get_chain_overview for Ethereum is as of its oldest figure (the chain TVL history ends 2023-07-25) and names each date in one note', async () => {
    const out = await callHandler('project-intelligence', 'get_chain_overview', { chain: 'Ethereum' });
    const d = out.data as { history: { to: string }; projects: { as_of: string } };
    expect(d.history.to).toBe('2023-07-25');
    expect(out.data_as_of).toBe('2023-07-25');
    expect(out.notes).toHaveLength(1);
    expect(out.notes![0]).toContain('TVL history as of 2023-07-25');
    expect(out.notes![0]).toContain(d.projects.as_of);
  });

  it("get_project_profile for Lido states its token price's day beside the listing's", async () => {
    const out = await callHandler('project-intelligence', 'get_project_profile', { project: 'lido' });
    const d = out.data as { token: { as_of: string } };
    expect(out.data_as_of).toBe([d.token.as_of, '2025-12-19'].sort()[0]);
    if (d.token.as_of !== '2025-12-19') expect(out.notes![0]).toContain(`token price as of ${d.token.as_of}`);
  });
});
