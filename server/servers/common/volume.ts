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
  // A weekly candle that spans a change of source sums days of each (providers/market/weekly.ts).
  const parts = source.split('+').map((part) => {
    const hit = SCOPES.find(([match]) => match.test(part));
    return hit ? hit[1](symbol.toUpperCase()) : `${part}: 24h volume as that source reports it`;
  });
  return parts.length === 1 ? parts[0]! : `a sum of days that count different things: ${parts.join('; then ')}`;
}

/** A note when the volumes of one answer count different things (one market beside an aggregate); else undefined. */
export function mixedVolumeNote(rows: readonly { symbol: string; source: string; volume_24h_usd: number | null }[]): string | undefined {
  const partial = rows.filter((r) => r.volume_24h_usd !== null && SCOPES.some(([match, , aggregate]) => !aggregate && match.test(r.source)));
  const whole = rows.filter((r) => r.volume_24h_usd !== null && !partial.includes(r));
  if (partial.length === 0 || whole.length === 0) return undefined;
  return `Volumes count different things: ${partial.map((r) => r.symbol.toUpperCase()).join(', ')} from a single market or pair, ${whole.map((r) => r.symbol.toUpperCase()).join(', ')} aggregated over exchanges (each figure's volume_source says which); do not compare them.`;
}

/** A quote's 24h volume with what it counts beside it: the one way an answer carries a quote's volume. */
export function quoteVolume(q: { source: string; symbol: string; volume_24h_usd: number | null }): { volume_24h_usd: number | null; volume_source: string | null } {
  return { volume_24h_usd: q.volume_24h_usd, volume_source: volumeSource(q.source, q.symbol, q.volume_24h_usd) };
}

/** What the volumes of candles count, by each candle's source (only sources with a volume in these candles). */
export function candleVolumeSources(candles: readonly { source: string; volume_usd: number | null }[], symbol: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of candles) if (c.volume_usd !== null && !(c.source in out)) out[c.source] = volumeSource(c.source, symbol, c.volume_usd)!;
  return out;
}

/**
 * A note when candles' volumes come from more than one source (BTC's from Yahoo's aggregate until
 * 2025-02-11, CryptoCompare's USD markets after): where each source starts, so that a step in
 * volume_usd is read as a change of what is counted. Undefined when one source (or none) has volume.
 */
export function candleVolumeNote(candles: readonly { date: string; source: string; volume_usd: number | null }[], symbol: string): string | undefined {
  const starts: { source: string; from: string }[] = [];
  for (const c of candles) if (c.volume_usd !== null && starts.at(-1)?.source !== c.source) starts.push({ source: c.source, from: c.date });
  if (new Set(starts.map((s) => s.source)).size < 2) return undefined;
  return `${symbol.toUpperCase()}'s volumes here count different things: ${starts.map((s) => `from ${s.from} ${s.source}`).join(', ')} (volume_sources says what each counts); a step in volume where the source changes is not a change in trading.`;
}

/**
 * Candles for a figure that sums volumes (a volume profile): only the volumes of the source of the
 * last candle with one count; other sources' volumes are set to null and said in the note.
 */
export function oneVolumeSource<C extends { date: string; source: string; volume_usd: number | null }>(candles: readonly C[], symbol: string) {
  const source = candles.findLast((c) => c.volume_usd !== null)?.source;
  const other = candles.filter((c) => c.volume_usd !== null && c.source !== source);
  const kept = candles.map((c) => (c.volume_usd !== null && c.source !== source ? { ...c, volume_usd: null } : c));
  const scope = source === undefined ? null : volumeSource(source, symbol, 0);
  const note = other.length > 0
    ? `The volume profile sums only ${source}'s volumes (${scope}); the ${other.length} days from ${other[0]!.date} to ${other.at(-1)!.date} come from ${[...new Set(other.map((c) => c.source))].join(', ')}, which count something else, and are left out of it (prices of every day still count).`
    : undefined;
  return { candles: kept, volume_source: scope, left_out: other.length, note };
}
