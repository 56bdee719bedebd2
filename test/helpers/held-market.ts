// Holdings and a market provider written out in a test, for holdingsRisk (the risk report behind
// get_risk_metrics and compare_wallets), which over HTTP is reached only through a chain scan:
// daily candles from closes, a provider answering candles from them, and a holding of an asset.
const DAY = 86_400_000;

export type FixtureCandle = ReturnType<typeof fixtureCandle>;

/** `count` consecutive UTC days from `start` (YYYY-MM-DD). */
export function fixtureDays(start: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => new Date(Date.parse(start) + i * DAY).toISOString().slice(0, 10));
}

export function fixtureCandle(date: string, close: number) {
  return { date, open: close, high: close, low: close, close, volume_usd: null, source: 'test' };
}

/** A market provider answering each id's candles from `series` (the rest is never read by holdingsRisk). */
export function fixtureMarket(series: Record<string, FixtureCandle[]>) {
  return {
    name: 'test',
    registry: {} as never,
    quotes: async () => [],
    global: async () => ({}) as never,
    candles: async (id: string) => ({ asset_id: id, candles: series[id]!, as_of: series[id]!.at(-1)!.date, source: 'test' }),
  };
}

/** One unit of `asset_id` on Ethereum, priced on `asOf` at USD 1,000. */
export function fixtureHolding(asset_id: string, asOf: string) {
  return { chain: 'ethereum' as const, token: null, symbol: asset_id.toUpperCase(), name: asset_id, asset_id, balance: '1', balance_raw: '1', price_usd: 1, price_as_of: asOf, value_usd: 1000 };
}
