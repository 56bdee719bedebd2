// Asset mention extraction and its ambiguity rules (server/analytics/mentions.ts), on the real
// registry of priced assets.
import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../server/providers/market/snapshot.ts';
import { mentionExtractor } from '../../server/providers/social/extractor.ts';

const x = mentionExtractor(loadSnapshot().assets);

describe('mention rules', () => {
  it('cashtags count in any case; bare tickers count in capitals', () => {
    expect(x.assets('loading up on $sol and $ETH')).toEqual(['solana', 'ethereum']);
    expect(x.assets('SOL is ripping')).toEqual(['solana']);
  });

  it('"sol" in lower case is not Solana, nor "etc", "uni" or "atom"', () => {
    expect(x.assets('el sol brilla, etc. I went to uni, an atom of hope')).toEqual([]);
  });

  it('well-known lower-case tickers that are not words count (btc, eth, xrp)', () => {
    expect(x.assets('bought some btc and eth, sold xrp')).toEqual(['bitcoin', 'ethereum', 'ripple']);
  });

  it('names count case-insensitively, longest first: Bitcoin Cash is not also Bitcoin', () => {
    expect(x.assets('bitcoin cash forked from BITCOIN')).toEqual(['bitcoin-cash', 'bitcoin']);
    expect(x.assets('Bitcoin Cash is fast')).toEqual(['bitcoin-cash']);
    expect(x.assets('I own 2 bitcoins')).toEqual(['bitcoin']);
  });

  it('names and tickers that are everyday words do not count as such ("near", "flow", "maker", "ONE")', () => {
    expect(x.assets('near the flow of the maker, ONE TIME only')).toEqual([]);
    expect(x.assets('$NEAR is listed')).toEqual(['near']);
  });

  it('two-letter tickers count only as cashtags', () => {
    expect(x.assets('OP said AR glasses')).toEqual([]);
    expect(x.assets('$OP airdrop')).toEqual(['optimism']);
  });

  it('a known contract address counts, in any letter case', () => {
    const link = loadSnapshot().assets.find((a) => a.id === 'chainlink')!.platforms.find((p) => p.chain === 'ethereum')!.address;
    expect(x.assets(`send to ${link.toUpperCase().replace('0X', '0x')} now`)).toEqual(['chainlink']);
    expect(x.assets('0x0000000000000000000000000000000000000001')).toEqual([]);
  });

  it('reports how each mention was recognised', () => {
    expect(x.mentions('$BTC and Ethereum and SOL').map((m) => [m.asset_id, m.via])).toEqual([
      ['bitcoin', 'cashtag'],
      ['ethereum', 'name'],
      ['solana', 'ticker'],
    ]);
  });
});
