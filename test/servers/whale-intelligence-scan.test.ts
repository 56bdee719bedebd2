// Pure parts of the whale tools: pages that always fit the gateway's result cap, and the
// exchange direction and venue rules.
import { describe, expect, it } from 'vitest';
import { ANSWER_ITEM_CHARS, page } from '../../server/servers/common/paging.ts';
import { direction, exchangeName } from '../../server/servers/whale-intelligence/scan.ts';

describe('page (common/paging)', () => {
  it('a page stops before the item that would pass the character budget, and the cursor resumes exactly there', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ i, pad: 'x'.repeat(990) }));
    const size = JSON.stringify(items[0]).length + 1;
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = page(items, 100, cursor);
      expect(p.items.length).toBeLessThanOrEqual(Math.floor(ANSWER_ITEM_CHARS / size));
      seen.push(...p.items.map((x) => x.i));
      cursor = p.next_cursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(items.map((x) => x.i));
    expect(pages).toBe(Math.ceil(100 / Math.floor(ANSWER_ITEM_CHARS / size)));
  });

  it('the limit still applies, and one item larger than the budget comes alone so a caller always progresses', () => {
    expect(page([1, 2, 3, 4, 5], 2, undefined)).toMatchObject({ items: [1, 2] });
    const huge = ['y'.repeat(ANSWER_ITEM_CHARS * 2), 'small'];
    const first = page(huge, 20, undefined);
    expect(first.items).toEqual([huge[0]]);
    expect(page(huge, 20, first.next_cursor)).toMatchObject({ items: ['small'] });
  });
});

describe('direction and exchangeName', () => {
  const ex = (label: string) => ({ label, kind: 'exchange', source: 'test' });
  const wallet = { label: 'Some wallet', kind: 'wallet', source: 'test' };
  it('names deposits, withdrawals, moves between venues and within one venue', () => {
    expect(direction(wallet, ex('Binance 14'))).toBe('to_exchange');
    expect(direction(ex('Kraken 3'), undefined)).toBe('from_exchange');
    expect(direction(ex('Binance 14'), ex('Coinbase 2'))).toBe('between_exchanges');
    expect(direction(ex('Binance 14'), ex('Binance 7'))).toBe('within_exchange');
    expect(direction(ex('Coinbase: Cold Migration 5'), ex('Coinbase 10'))).toBe('within_exchange');
    expect(direction(wallet, undefined)).toBe('none');
  });
  it('the venue is the name before a colon without a wallet number', () => {
    expect(exchangeName(ex('Coinbase: LINK Hot 12'))).toBe('Coinbase');
    expect(exchangeName(ex('Binance 9'))).toBe('Binance');
    expect(exchangeName(ex('Binance (devnet)'))).toBe('Binance (devnet)');
  });
});
