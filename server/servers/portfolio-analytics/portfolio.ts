// Portfolio tools: priced holdings, their risk, and wallets side by side.
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { datedAnswer } from '../common/dating.ts';
import { chainFailureShape } from '../common/output-shapes-2.ts';
import { chainsReadShape, chainsSchema, scanPortfolio, walletAddressSchema, walletHoldingsShape, type Holding, type PortfolioScan } from './holdings.ts';
import { holdingsRisk, riskReportShape, type RiskReport } from './risk.ts';
import type { ServerDeps } from '../deps.ts';

const windowSchema = z.number().int().min(30).max(365).default(90).describe('Days of daily prices the metrics cover (30-365).');

/** Distinct addresses, as given; duplicates are a caller mistake worth naming. */
const addressesSchema = (min: number, max: number) =>
  z
    .array(walletAddressSchema)
    .min(min)
    .max(max)
    .refine((xs) => new Set(xs.map((x) => (x.startsWith('0x') ? x.toLowerCase() : x))).size === xs.length, 'addresses must be distinct');

export function portfolioTools(deps: ServerDeps): ToolDefinition[] {
  const sourceOf = (scan: PortfolioScan) => `${scan.chains.map((c) => (c.chain === 'solana' ? 'rpc:solana' : `rpc:${c.chain}`)).join('+')}${scan.prices.source ? `+${scan.prices.source}` : ''}`;

  const allocation = (holdings: Holding[]) => {
    const byAsset = new Map<string, { symbol: string; asset_id: string; value_usd: number }>();
    let total = 0;
    for (const h of holdings) {
      if (h.value_usd === null || !h.asset_id) continue;
      const a = byAsset.get(h.asset_id) ?? { symbol: h.symbol, asset_id: h.asset_id, value_usd: 0 };
      a.value_usd += h.value_usd;
      byAsset.set(h.asset_id, a);
      total += h.value_usd;
    }
    return [...byAsset.values()]
      .sort((a, b) => b.value_usd - a.value_usd)
      .map((a) => ({ ...a, value_usd: Math.round(a.value_usd * 100) / 100, share: total > 0 ? Math.round((a.value_usd / total) * 1e6) / 1e6 : 0 }));
  };

  const allocationShape = z.object({ symbol: z.string(), asset_id: z.string(), value_usd: z.number(), share: z.number().describe('Of the priced value, 0-1.') });
  /** The chains read and the ones that could not be: every answer states both. */
  const chainsRead = { chains: chainsReadShape, unavailable: z.array(chainFailureShape) };

  const risk = async (holdings: Holding[], windowDays: number, signal: AbortSignal): Promise<RiskReport> => {
    const report = await holdingsRisk(deps.market, holdings, windowDays, signal);
    if (!report) throw new ApiError('NOT_FOUND', 'The wallets hold nothing with a price history on the scanned chains, so there is no risk to measure.');
    return report;
  };

  return [
    defineTool({
      name: 'get_portfolio',
      title: 'Portfolio',
      description:
        'Returns the native coin and curated-list token balances (spam left out) of up to 10 addresses across chains, priced in USD, with each wallet\'s value and the allocation by asset.',
      input: z.object({ addresses: addressesSchema(1, 10), chains: chainsSchema }).strict(),
      output: z.object({
        total_value_usd: z.number(),
        wallets: z.array(walletHoldingsShape),
        allocation: z.array(allocationShape),
        unpriced_holdings: z.number().int(),
        ...chainsRead,
        unlisted_solana_tokens: z.number().int().describe('Solana token accounts of mints on no curated list (not counted).'),
        coverage: z.string(),
      }),
      credits: 2,
      handler: async (args, ctx) => {
        const scan = await scanPortfolio(deps, args.addresses, args.chains, ctx.signal);
        const all = scan.wallets.flatMap((w) => w.holdings);
        return {
          data: {
            total_value_usd: Math.round(scan.wallets.reduce((a, w) => a + w.value_usd, 0) * 100) / 100,
            wallets: scan.wallets,
            allocation: allocation(all),
            unpriced_holdings: all.filter((h) => h.value_usd === null).length,
            chains: scan.chains,
            unavailable: scan.unavailable,
            unlisted_solana_tokens: scan.unlisted_solana_tokens,
            coverage: 'Native coins plus every token of the curated lists (Uniswap default list, devnet manifest) on each chain; tokens on no curated list are not counted.',
          },
          source: sourceOf(scan),
          ...datedAnswer(scan.prices.dates.map((d) => ({ label: `${d.symbol} price`, as_of: d.as_of }))),
          // Nothing held on the chains read: no data for what was asked, which is free.
          empty: all.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_risk_metrics',
      title: 'Portfolio risk metrics',
      description:
        'Returns the risk of the wallets\' current priced holdings over a window of daily prices: volatility of daily log returns, total and compounded annualised return, Sharpe ratio on log returns, maximum drawdown, 1-day 95% value at risk (fraction and USD), concentration (HHI, top holding) and beta to BTC.',
      input: z.object({ addresses: addressesSchema(1, 10), chains: chainsSchema, window_days: windowSchema }).strict(),
      output: riskReportShape.extend(chainsRead),
      credits: 3,
      handler: async (args, ctx) => {
        const scan = await scanPortfolio(deps, args.addresses, args.chains, ctx.signal);
        const report = await risk(scan.wallets.flatMap((w) => w.holdings), args.window_days, ctx.signal);
        return {
          data: { ...report, chains: scan.chains, unavailable: scan.unavailable },
          source: sourceOf(scan),
          data_as_of: report.to,
        };
      },
    }),
    defineTool({
      name: 'compare_wallets',
      title: 'Compare wallets',
      description: 'Returns 2-5 wallets side by side: USD value, number of holdings, top holding, allocation, the assets they share, and each one\'s log-return volatility, compounded annualised return, drawdown, Sharpe ratio, beta to BTC and 1-day 95% VaR.',
      input: z.object({ addresses: addressesSchema(2, 5), chains: chainsSchema, window_days: windowSchema }).strict(),
      output: z.object({
        wallets: z.array(
          z.object({
            address: z.string(),
            value_usd: z.number(),
            holdings: z.number().int().describe('How many.'),
            top_holding: allocationShape.nullable(),
            allocation: z.array(allocationShape),
            risk: z
              .object({
                log_return_volatility_annualised: z.number(),
                return_annualised_geometric: z.number(),
                max_drawdown: z.number().describe('Positive fraction.'),
                sharpe: z.number().nullable(),
                beta_to_btc: z.number().nullable(),
                var_95_1d_usd: z.number(),
              })
              .nullable()
              .describe('null when nothing held has a price history.'),
          }),
        ),
        shared_assets: z.array(z.string()).describe('Asset ids every wallet holds.'),
        window_days: z.number().int(),
        ...chainsRead,
      }),
      credits: 4,
      handler: async (args, ctx) => {
        const scan = await scanPortfolio(deps, args.addresses, args.chains, ctx.signal);
        const wallets = await Promise.all(
          scan.wallets.map(async (w) => {
            const alloc = allocation(w.holdings);
            const r = await holdingsRisk(deps.market, w.holdings, args.window_days, ctx.signal);
            return {
              address: w.address,
              value_usd: w.value_usd,
              holdings: w.holdings.length,
              top_holding: alloc[0] ?? null,
              allocation: alloc,
              risk: r
                ? {
                    log_return_volatility_annualised: r.log_return_volatility_annualised,
                    return_annualised_geometric: r.return_annualised_geometric,
                    max_drawdown: r.max_drawdown.depth,
                    sharpe: r.sharpe,
                    beta_to_btc: r.beta_to_btc,
                    var_95_1d_usd: r.var_95_1d.usd,
                  }
                : null,
            };
          }),
        );
        const held = wallets.map((w) => new Set(w.allocation.map((a) => a.asset_id)));
        const shared = [...(held[0] ?? [])].filter((id) => held.every((s) => s.has(id)));
        return {
          data: { wallets, shared_assets: shared, window_days: args.window_days, chains: scan.chains, unavailable: scan.unavailable },
          source: sourceOf(scan),
          ...datedAnswer(scan.prices.dates.map((d) => ({ label: `${d.symbol} price`, as_of: d.as_of }))),
          // Nothing held by any wallet on the chains read: no data for what was asked, which is free.
          empty: wallets.every((w) => w.holdings === 0),
        };
      },
    }),
  ];
}
