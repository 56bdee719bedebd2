// Daily closes for scoring calls, from the snapshot's full histories (2010 onwards for BTC,
// 2013-2017 CoinMarketCap rows for the older coins): the live API has no 2011-2017 history.
import type { CloseOn } from '../../analytics/calls.ts';
import type { SnapshotProvider } from '../../providers/market/snapshot.ts';

export function snapshotCloses(snapshot: SnapshotProvider): { closeOn: CloseOn; range: (asset: string) => { from: string; to: string } | undefined } {
  const byAsset = new Map<string, Map<string, number>>();
  const index = (asset: string) => {
    let m = byAsset.get(asset);
    if (!m) {
      m = new Map();
      const s = snapshot.data.series[asset];
      if (s) for (let i = 0; i < s.dates.length; i++) m.set(s.dates[i]!, i);
      byAsset.set(asset, m);
    }
    return m;
  };
  return {
    closeOn: (asset, date) => {
      const i = index(asset).get(date);
      const s = snapshot.data.series[asset];
      return i === undefined || !s ? undefined : { close: s.close[i]!, source: snapshot.sourceName(s.source[i]!) };
    },
    range: (asset) => {
      const s = snapshot.data.series[asset];
      return s && s.dates.length ? { from: s.dates[0]!, to: s.dates[s.dates.length - 1]! } : undefined;
    },
  };
}
