// The committed snapshot is exactly what `npm run data:build` makes from data/raw: nobody can
// change the raw data, the mappings or the build without rebuilding, and the build is repeatable.
import { describe, expect, it } from 'vitest';
import { build } from '../../scripts/data-build.ts';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';

describe('data:build', () => {
  const { snapshot, report } = build();

  it('reproduces the committed data/snapshot/market.json.gz exactly', () => {
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(loadSnapshot());
  });

  it('records the source of every row and reports conflicts by the documented rule', () => {
    for (const series of Object.values(snapshot.series)) {
      expect(series.source).toHaveLength(series.dates.length);
      expect(series.dates).toEqual([...series.dates].sort());
    }
    expect(report.conflict_rule).toMatch(/yahoo > cryptocompare > coinmarketcap > binance > coingecko/);
    expect(report.mapping_symbol_mismatches).toEqual([]);
  });
});
