// The label book and token registry over the committed public data, and the pure token analysis.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { createLabelBook, kindOf, PUBLIC_LABELS_FILE } from '../../server/providers/labels.ts';
import { createTokenRegistry } from '../../server/providers/tokens.ts';
import { concentration, findPrivileges, pushedSelectors } from '../../server/servers/token-intelligence/analysis.ts';

const rows = parse(gunzipSync(fs.readFileSync(PUBLIC_LABELS_FILE)), { columns: true }) as { chain: string; address: string; name: string; labels: string }[];

describe('label book', () => {
  it('labels a public exchange wallet as an exchange on its own network', () => {
    const row = rows.find((r) => r.chain === 'ethereum' && r.labels.split(';').includes('kraken') && !r.labels.includes('fund'))!;
    const book = createLabelBook();
    expect(book.get(row.address, 'ethereum')).toMatchObject({ label: row.name, kind: 'exchange' });
    // Any-case hex finds it too.
    expect(book.get(row.address.toUpperCase().replace('0X', '0x'))?.label).toBe(row.name);
  });

  it('keeps networks apart when one is asked for', () => {
    const baseOnly = rows.find((r) => r.chain === 'base' && !rows.some((o) => o.chain === 'ethereum' && o.address === r.address))!;
    const book = createLabelBook();
    expect(book.get(baseOnly.address, 'base')?.label).toBe(baseOnly.name);
    expect(book.get(baseOnly.address, 'ethereum')).toBeUndefined();
  });

  it('lets the devnet overlay win over the public data', () => {
    const row = rows.find((r) => r.chain === 'ethereum')!;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-labels-')), 'manifest.json');
    fs.writeFileSync(file, JSON.stringify({ accounts: [{ address: row.address, label: 'Overlay', kind: 'wallet' }] }));
    expect(createLabelBook({ devnetManifest: file }).get(row.address)).toMatchObject({ label: 'Overlay', kind: 'wallet', source: 'devnet manifest' });
  });

  it('classifies slugs: flagged wins, a fund deposit at an exchange is the fund, venue slugs are exchanges', () => {
    expect(kindOf(['binance', 'phish-hack'], 'x')).toBe('flagged');
    expect(kindOf(['fund'], 'Three Arrows Capital: Binance Deposit')).toBe('fund');
    expect(kindOf(['coinbase'], 'Coinbase 10')).toBe('exchange');
    expect(kindOf([], 'Arbitrum: Bridge')).toBe('bridge');
    expect(kindOf(['charity'], 'x')).toBe('other');
  });
});

describe('token registry', () => {
  it('merges the curated list (decimals, listed) with the label clouds (tags, website)', () => {
    const reg = createTokenRegistry();
    const usdc = reg.get('ethereum', '0xA0b86991c6218b36c1d19d4a2e9eB0cE3606eB48')!;
    expect(usdc).toMatchObject({ symbol: 'USDC', decimals: 6, listed: true });
    expect(usdc.tags).toContain('stablecoin');
    expect(reg.listed('ethereum').every((t) => t.listed && t.network === 'ethereum')).toBe(true);
  });

  it('puts devnet tokens on the networks pointed at the devnet only', () => {
    const reg = createTokenRegistry({ devnet: { tokens: [{ address: '0x00000000000000000000000000000000000000aa', symbol: 'DEV', name: 'Dev', decimals: 9 }], networks: ['base'] } });
    expect(reg.get('base', '0x00000000000000000000000000000000000000AA')).toMatchObject({ symbol: 'DEV', decimals: 9, listed: true });
    expect(reg.get('ethereum', '0x00000000000000000000000000000000000000aa')).toBeUndefined();
  });
});

describe('token analysis', () => {
  it('reads PUSH4 operands as selectors but never bytes inside other push data', () => {
    // PUSH4 0x40c10f19 (mint), then PUSH32 whose data contains 0x63 8456cb59 (pause) as data.
    const code = `0x6340c10f19507f63${'8456cb59'}${'00'.repeat(27)}00` as const;
    const selectors = pushedSelectors(code);
    expect(selectors.has('0x40c10f19')).toBe(true);
    expect(selectors.has('0x8456cb59')).toBe(false);
    expect(findPrivileges([{ where: 'contract', code }]).map((f) => f.id)).toEqual(['mint']);
  });

  it('measures concentration: one holder is total, equal holders have Gini 0', () => {
    expect(concentration([100n], 100n)).toEqual({ top10_share: 1, hhi: 10000, gini: 0 });
    const equal = concentration([25n, 25n, 25n, 25n], 100n);
    expect(equal).toEqual({ top10_share: 1, hhi: 2500, gini: 0 });
    // Two holders, 90/10: Gini = |0.9-0.1| * 2 / (2 * 2^2 * 0.5) = 0.4.
    expect(concentration([90n, 10n], 100n).gini).toBeCloseTo(0.4, 6);
  });
});
