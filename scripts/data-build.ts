// npm run data:build — normalises data/raw (real public CSVs, see data/README.md) into what the
// server loads: data/snapshot/market.json.gz (asset registry, one daily OHLCV series per asset
// merged across sources with the source of every row, market caps where known, DeFi TVL) and
// data/snapshot/build-report.json (coverage and every conflict between sources).
// The output is deterministic: the same raw files always give the same bytes.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { daysBetween } from '../server/lib/dates.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RAW = path.join(ROOT, 'data/raw');
const OUT = path.join(ROOT, 'data/snapshot');

/**
 * Sources of daily prices, highest priority first. On a day several sources cover, the row of
 * the highest-priority one is kept (OHLC, volume and the source name together); the others are
 * compared with it and a close differing by more than CONFLICT_PCT is reported as a conflict.
 * Why this order: Yahoo has full USD OHLCV for the majors up to 2025-02-11; CryptoCompare is the
 * longest BTC/USD history (2010 - 2025-12-09); CoinMarketCap has USD OHLCV for 2013-2017;
 * Binance is USDT-quoted (USDT taken as USD, usually within 0.5%); CoinGecko has only one price
 * a day (no OHLC), so it is the last resort for prices but the main source of market caps.
 */
export const SOURCES = [
  { id: 'yahoo', file: 'ohlcv/yahoo_usd_daily_2014_2025.csv', quote: 'USD' },
  { id: 'cryptocompare', file: 'ohlcv/btc_usd_daily_2010_2025.csv', quote: 'USD' },
  { id: 'coinmarketcap', file: 'ohlcv/coinmarketcap_daily_2013_2017.csv', quote: 'USD' },
  { id: 'binance', file: 'ohlcv/binance_usdt_daily_2023_2024.csv', quote: 'USDT' },
  { id: 'coingecko', file: 'ohlcv/coingecko_daily_2021_top150.csv', quote: 'USD' },
] as const;
type SourceId = (typeof SOURCES)[number]['id'];
const CONFLICT_PCT = 2;

interface Row {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume_usd: number | null;
  market_cap_usd: number | null;
  source: SourceId;
}

function readCsv(file: string): Record<string, string>[] {
  const text = gunzipSync(fs.readFileSync(path.join(RAW, `${file}.gz`))).toString('utf8');
  return parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

const num = (s: string | undefined): number | null => {
  if (s === undefined || s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
};

const mappings = JSON.parse(fs.readFileSync(path.join(ROOT, 'data/mappings/symbols.json'), 'utf8')) as {
  yahoo: Record<string, string>;
  binance: Record<string, string>;
  coinmarketcap: Record<string, string>;
  aliases: Record<string, string[]>;
};

export function build() {
  const report = {
    conflict_rule: `on a day covered by several sources the highest-priority source's row is kept (priority: ${SOURCES.map((s) => s.id).join(' > ')}); a close differing from it by more than ${CONFLICT_PCT}% is listed here`,
    unmapped_symbols: [] as string[],
    mapping_symbol_mismatches: [] as { source: string; symbol: string; id: string; registry_symbol: string }[],
    skipped_rows: {} as Record<string, number>,
    assets: {} as Record<string, { first_date: string; last_date: string; days: number; rows_by_source: Record<string, number>; conflicts: number; max_conflict_pct: number; conflict_examples: { date: string; kept: string; other: string; diff_pct: number }[] }>,
  };

  // Registry base: CoinGecko's coin list (id, symbol, name).
  const registry = new Map<string, { id: string; symbol: string; name: string; aliases: Set<string>; platforms: { chain: string; address: string }[] }>();
  for (const r of readCsv('coins/coingecko_coin_ids_2023.csv')) {
    const id = r.coingecko_id!.trim();
    if (!id || registry.has(id)) continue;
    registry.set(id, { id, symbol: r.symbol!.trim().toLowerCase(), name: r.name!.trim(), aliases: new Set(), platforms: [] });
  }

  const rows = new Map<string, Row[]>();
  const unmapped = new Set<string>();
  const add = (id: string, row: Row) => {
    if (!registry.has(id)) {
      unmapped.add(`${row.source}:${id} (not in the CoinGecko id list; its rows are left out)`);
      return;
    }
    let list = rows.get(id);
    if (!list) rows.set(id, (list = []));
    list.push(row);
  };
  const skip = (source: string) => (report.skipped_rows[source] = (report.skipped_rows[source] ?? 0) + 1);
  const checkMapping = (source: string, symbol: string, id: string) => {
    const entry = registry.get(id);
    if (!entry) unmapped.add(`${source}:${symbol} -> ${id} (not in the CoinGecko id list; its rows are left out)`);
    else if (source !== 'coinmarketcap' && entry.symbol !== symbol.toLowerCase()) {
      report.mapping_symbol_mismatches.push({ source, symbol, id, registry_symbol: entry.symbol });
    }
  };
  for (const [s, id] of Object.entries(mappings.yahoo)) checkMapping('yahoo', s, id);
  for (const [s, id] of Object.entries(mappings.binance)) checkMapping('binance', s, id);
  for (const [s, id] of Object.entries(mappings.coinmarketcap)) checkMapping('coinmarketcap', s, id);

  const ohlc = (r: Record<string, string>) => {
    const o = num(r.open), h = num(r.high), l = num(r.low), c = num(r.close);
    return o !== null && h !== null && l !== null && c !== null && c > 0 ? { open: o, high: h, low: l, close: c } : null;
  };

  for (const r of readCsv(SOURCES[0].file)) {
    const id = mappings.yahoo[r.symbol!];
    const p = ohlc(r);
    if (!id || !p) { skip('yahoo'); continue; }
    add(id, { date: r.date!, ...p, volume_usd: num(r.volume_usd), market_cap_usd: null, source: 'yahoo' });
  }
  for (const r of readCsv(SOURCES[1].file)) {
    const p = ohlc(r);
    if (!p) { skip('cryptocompare'); continue; }
    const vol = num(r.volume);
    // CryptoCompare's volume is in BTC: valued at the day's close.
    add('bitcoin', { date: r.date!, ...p, volume_usd: vol === null ? null : vol * p.close, market_cap_usd: null, source: 'cryptocompare' });
  }
  for (const r of readCsv(SOURCES[2].file)) {
    const id = mappings.coinmarketcap[r.coin!];
    const p = ohlc(r);
    if (!id || !p) { skip('coinmarketcap'); continue; }
    add(id, { date: r.date!, ...p, volume_usd: num(r.volume_usd), market_cap_usd: num(r.market_cap_usd), source: 'coinmarketcap' });
  }
  for (const r of readCsv(SOURCES[3].file)) {
    const id = mappings.binance[r.base!];
    const p = ohlc(r);
    if (!id || !p) { skip('binance'); continue; }
    const vol = num(r.volume_base);
    // Binance's volume is in the base asset: valued at the day's close (in USDT, taken as USD).
    add(id, { date: r.date!, ...p, volume_usd: vol === null ? null : vol * p.close, market_cap_usd: null, source: 'binance' });
  }
  // CoinGecko: one price a day, taken at 00:00 UTC (it matches Yahoo's open, not its close). So
  // the candle of day D is open = price(D), close = price(D+1), high/low = max/min of the two:
  // derived, not observed, and labelled by the source. The last day has no close and is dropped.
  const geckoByAsset = new Map<string, Record<string, string>[]>();
  for (const r of readCsv(SOURCES[4].file)) {
    const list = geckoByAsset.get(r.coingecko_id!) ?? [];
    list.push(r);
    geckoByAsset.set(r.coingecko_id!, list);
  }
  const caps = new Map<string, Map<string, number>>();
  for (const [id, list] of geckoByAsset) {
    list.sort((a, b) => (a.date! < b.date! ? -1 : 1));
    for (let i = 0; i < list.length; i++) {
      const r = list[i]!;
      const cap = num(r.market_cap_usd);
      if (cap !== null && cap > 0) {
        if (!caps.has(id)) caps.set(id, new Map());
        caps.get(id)!.set(r.date!, cap);
      }
      const open = num(r.price_usd);
      const next = list[i + 1];
      const close = next && daysBetween(r.date!, next.date!) === 1 ? num(next.price_usd) : null;
      if (open === null || close === null || open <= 0 || close <= 0) { skip('coingecko'); continue; }
      add(id, { date: r.date!, open, high: Math.max(open, close), low: Math.min(open, close), close, volume_usd: num(r.total_volume_usd), market_cap_usd: cap, source: 'coingecko' });
    }
  }

  report.unmapped_symbols = [...unmapped].sort();

  // Merge per asset and day by source priority.
  const priority = new Map(SOURCES.map((s, i) => [s.id as string, i]));
  const series: Record<string, { dates: string[]; open: number[]; high: number[]; low: number[]; close: number[]; volume_usd: (number | null)[]; market_cap_usd: (number | null)[]; source: number[] }> = {};
  for (const id of [...rows.keys()].sort()) {
    const byDate = new Map<string, Row[]>();
    for (const r of rows.get(id)!) {
      const list = byDate.get(r.date) ?? [];
      list.push(r);
      byDate.set(r.date, list);
    }
    const s = { dates: [] as string[], open: [] as number[], high: [] as number[], low: [] as number[], close: [] as number[], volume_usd: [] as (number | null)[], market_cap_usd: [] as (number | null)[], source: [] as number[] };
    const info = { first_date: '', last_date: '', days: 0, rows_by_source: {} as Record<string, number>, conflicts: 0, max_conflict_pct: 0, conflict_examples: [] as { date: string; kept: string; other: string; diff_pct: number }[] };
    for (const date of [...byDate.keys()].sort()) {
      const candidates = byDate.get(date)!.sort((a, b) => priority.get(a.source)! - priority.get(b.source)!);
      const kept = candidates[0]!;
      for (const other of candidates.slice(1)) {
        const diff = (Math.abs(other.close - kept.close) / kept.close) * 100;
        if (diff > CONFLICT_PCT) {
          info.conflicts++;
          info.max_conflict_pct = Math.max(info.max_conflict_pct, Number(diff.toFixed(2)));
          if (info.conflict_examples.length < 5) info.conflict_examples.push({ date, kept: kept.source, other: other.source, diff_pct: Number(diff.toFixed(2)) });
        }
      }
      const cap = kept.market_cap_usd ?? candidates.find((c) => c.market_cap_usd !== null)?.market_cap_usd ?? caps.get(id)?.get(date) ?? null;
      s.dates.push(date);
      s.open.push(kept.open);
      s.high.push(kept.high);
      s.low.push(kept.low);
      s.close.push(kept.close);
      s.volume_usd.push(kept.volume_usd);
      s.market_cap_usd.push(cap);
      s.source.push(priority.get(kept.source)!);
      info.rows_by_source[kept.source] = (info.rows_by_source[kept.source] ?? 0) + 1;
    }
    info.first_date = s.dates[0]!;
    info.last_date = s.dates[s.dates.length - 1]!;
    info.days = s.dates.length;
    series[id] = s;
    report.assets[id] = info;
  }

  // Contracts where known: Uniswap's token lists, matched to a priced asset by symbol and name.
  for (const r of readCsv('coins/uniswap_default_tokenlist_by_chain.csv')) {
    const symbol = r.symbol!.toLowerCase();
    const name = r.name!.toLowerCase();
    for (const id of Object.keys(series)) {
      const e = registry.get(id)!;
      if (e.symbol === symbol && (e.name.toLowerCase() === name || name.includes(e.name.toLowerCase()) || e.name.toLowerCase().includes(name))) {
        if (!e.platforms.some((p) => p.chain === r.chain && p.address === r.address)) e.platforms.push({ chain: r.chain!, address: r.address! });
      }
    }
  }
  for (const [id, list] of Object.entries(mappings.aliases)) for (const a of list) registry.get(id)?.aliases.add(a);

  // Market-cap rank on the last day CoinGecko reports caps, for ranking ambiguous symbols.
  const lastCaps = [...caps.entries()].map(([id, m]) => [id, [...m.entries()].sort()[m.size - 1]![1]] as const).sort((a, b) => b[1] - a[1]);
  const rank = new Map(lastCaps.map(([id], i) => [id, i + 1]));

  const assets = [...registry.values()]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((e) => ({
      id: e.id,
      symbol: e.symbol,
      name: e.name,
      aliases: [...e.aliases].sort(),
      platforms: e.platforms.sort((x, y) => (x.chain + x.address < y.chain + y.address ? -1 : 1)),
      has_prices: e.id in series,
      market_cap_rank: rank.get(e.id) ?? null,
    }));

  const tvl = readCsv('projects/defillama_total_defi_tvl_daily_2018_2023.csv')
    .map((r) => ({ date: r.date!, tvl: num(r.tvl_usd) }))
    .filter((r): r is { date: string; tvl: number } => r.tvl !== null)
    .sort((a, b) => (a.date < b.date ? -1 : 1));
  const protocols = readCsv('projects/defillama_protocols_2025-12-19.csv');
  // DefiLlama's headline total leaves out categories that would count the same money twice.
  const excluded = new Set(['CEX', 'Chain', 'Liquid Staking', 'Liquid Restaking', 'Restaking', 'Bridge', 'Canonical Bridge']);
  const protocolTvl = protocols.reduce((sum, r) => (excluded.has(r.category ?? '') ? sum : sum + (num(r.tvl_usd) ?? 0)), 0);

  // The last day CoinGecko reports caps for all its assets: the market-wide totals' basis.
  const capDay = [...caps.values()].flatMap((m) => [...m.keys()]).sort().pop()!;
  const capsOnDay: Record<string, number> = {};
  for (const [id, m] of [...caps.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const cap = m.get(capDay);
    if (cap !== undefined && registry.has(id)) capsOnDay[id] = cap;
  }

  const snapshot = {
    format: 1,
    market_caps: { source: 'snapshot:coingecko', as_of: capDay, usd: capsOnDay },
    sources: SOURCES.map((s) => ({ id: s.id, file: s.file, quote: s.quote })),
    assets,
    series,
    defi_tvl: {
      daily: { source: 'defillama:total_defi_tvl_daily_2018_2023', dates: tvl.map((t) => t.date), tvl_usd: tvl.map((t) => t.tvl) },
      protocols_total: { source: 'defillama:protocols_2025-12-19', as_of: '2025-12-19', tvl_usd: Math.round(protocolTvl), excluded_categories: [...excluded].sort(), protocols: protocols.length },
    },
  };
  return { snapshot, report };
}

if (import.meta.main) {
  const { snapshot, report } = build();
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'market.json.gz'), gzipSync(JSON.stringify(snapshot), { level: 9 }));
  fs.writeFileSync(path.join(OUT, 'build-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const priced = Object.keys(snapshot.series).length;
  const conflicts = Object.values(report.assets).reduce((n, a) => n + a.conflicts, 0);
  console.log(`data:build: ${snapshot.assets.length} registry entries, ${priced} priced assets, ${conflicts} conflicting days reported, ${report.unmapped_symbols.length} unmapped symbols, ${report.mapping_symbol_mismatches.length} symbol mismatches`);
}
