// What a 24h volume figure counts depends on the source of its row (data/README.md: one source per
// asset and day, its row kept whole): CryptoCompare's BTC/USD history counts only USD-quoted
// markets, Binance's only its own USDT pair, while Yahoo, CoinMarketCap and CoinGecko report an
// aggregate over markets. An answer names each figure's source, and says so when it puts figures
// of different scopes side by side (BTC's $2.6B beside ETH's $18B measures two different things).

const SCOPES: [match: RegExp, scope: (symbol: string) => string, aggregate: boolean][] = [
  [/cryptocompare/, (s) => `CryptoCompare daily ${s}/USD volume: USD-quoted markets only (not USDT or other pairs), in ${s} valued at the close`, false],
  [/binance/, (s) => `Binance ${s}/USDT spot volume only (one exchange, one pair), valued at the close`, false],
  [/yahoo/, (s) => `Yahoo Finance ${s}-USD daily volume (an aggregate over exchanges)`, true],
  [/coinmarketcap/, () => 'CoinMarketCap daily volume (an aggregate over exchanges)', true],
  [/coingecko/, () => 'CoinGecko 24h volume (an aggregate over exchanges)', true],
];

/** What the volume of a row from `source` counts, in words, or null when there is no volume. */
export function volumeSource(source: string, symbol: string, volume: number | null): string | null {
  if (volume === null) return null;
  const hit = SCOPES.find(([match]) => match.test(source));
  return hit ? hit[1](symbol.toUpperCase()) : `${source}: 24h volume as that source reports it`;
}

/** A note when the volumes of one answer count different things (one market beside an aggregate); else undefined. */
export function mixedVolumeNote(rows: { symbol: string; source: string; volume: number | null }[]): string | undefined {
  const partial = rows.filter((r) => r.volume !== null && SCOPES.some(([match, , aggregate]) => !aggregate && match.test(r.source)));
  const whole = rows.filter((r) => r.volume !== null && !partial.includes(r));
  if (partial.length === 0 || whole.length === 0) return undefined;
  return `Volumes count different things: ${partial.map((r) => r.symbol.toUpperCase()).join(', ')} from a single market or pair, ${whole.map((r) => r.symbol.toUpperCase()).join(', ')} aggregated over exchanges (each figure's volume_source says which); do not compare them.`;
}
