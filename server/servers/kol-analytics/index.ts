import { CALL_RULE_QUALITY } from '../../analytics/calls.ts';
import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { kolTools } from './tools.ts';
import { serverIcon } from '../icons.ts';

export function kolAnalytics(deps: ServerDeps): ServerSpec {
  return {
    name: 'kol-analytics',
    icon: serverIcon('kol-analytics'),
    title: 'KOL Analytics',
    description: 'Key opinion leaders: profiles, their calls on assets, how those calls did against the price history and BTC, leaderboards, and who talked about an asset first and most.',
    chains: [],
    freshness: 'posts',
    dataFreshness:
      'Offline dataset: tweets of 10 crypto accounts (2011-07-04 to 2017-12-07), Reddit authors (2025-09-29 to 2025-12-06), the 2017 crypto-influencer graph; calls are scored on the snapshot\'s daily closes (BTC from 2010, the older coins 2013-2017 from CoinMarketCap; BTC is the only asset priced after 2025-02-11). ' + CALL_RULE_QUALITY,
    tools: kolTools(deps),
  };
}
