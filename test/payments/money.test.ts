// Money is integer base units end to end (issue 21): prices in cents become token base units by
// exact integer scaling (BSC's USDC has 18 decimals, so amounts pass 2^53 and 2^64), the x402
// price per credit is parsed from a decimal string without floating point, and payment settings
// are checked once at start with a message naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, usdToMicros } from '../../server/config.ts';
import { centsToBaseUnits, formatUnits } from '../../server/payments/orders.ts';
import { priceOf } from '../../server/x402/plugin.ts';

const TREASURY = '0x1111111111111111111111111111111111111111';

describe('integer money', () => {
  it('cents become token base units exactly, on 6-decimal USDC and on BSC’s 18-decimal USDC', () => {
    expect(centsToBaseUnits(2900, 6)).toBe(29_000_000n);
    expect(centsToBaseUnits(19900, 18)).toBe(199n * 10n ** 18n);
    expect(centsToBaseUnits(19900, 18) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(formatUnits(199n * 10n ** 18n, 18)).toBe('199.00');
    expect(formatUnits('29000001', 6)).toBe('29.000001');
  });

  it('the USD price of a credit is parsed as integer millionths, and a tool’s x402 price scales to the asset’s decimals', () => {
    expect(usdToMicros('0.001')).toBe(1000n);
    expect(usdToMicros('1')).toBe(1_000_000n);
    expect(usdToMicros('0.000001')).toBe(1n);
    const x402 = loadConfig({ X402_PAY_TO: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:1', X402_USD_PER_CREDIT: '0.003' }).x402!;
    expect(priceOf(5, x402)).toBe(15_000n);
    expect(priceOf(5, { ...x402, assetDecimals: 18 })).toBe(15n * 10n ** 15n);
  });
});

describe('payment settings', () => {
  it('chains default to native USDC per chain (18 decimals on BSC) and need a treasury of the chain’s kind', () => {
    const config = loadConfig({ PAYMENT_CHAINS: JSON.stringify({ bsc: { treasury: TREASURY }, base: { treasury: TREASURY, confirmations: 3 } }) });
    expect(config.payments.chains).toEqual([
      { chain: 'bsc', treasury: TREASURY, token: '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d', decimals: 18, chainId: 56, confirmations: 15 },
      { chain: 'base', treasury: TREASURY, token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', decimals: 6, chainId: 8453, confirmations: 3 },
    ]);
    expect(() => loadConfig({ PAYMENT_CHAINS: JSON.stringify({ solana: { treasury: TREASURY } }) })).toThrow(/PAYMENT_CHAINS[\s\S]*solana/);
    expect(() => loadConfig({ PAYMENT_CHAINS: '{"tron":{"treasury":"x"}}' })).toThrow(ConfigError);
    expect(() => loadConfig({ CREDIT_PACKS: '[{"name":"x","credits":10,"price_cents":9.5}]' })).toThrow(/CREDIT_PACKS/);
  });

  it('x402 is off without a payee, and with one needs a settlement key or a facilitator', () => {
    expect(loadConfig({}).x402).toBeUndefined();
    expect(() => loadConfig({ X402_PAY_TO: TREASURY })).toThrow(/X402_SETTLEMENT_KEY[\s\S]*X402_FACILITATOR_URL/);
    expect(() => loadConfig({ X402_PAY_TO: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:1', X402_USD_PER_CREDIT: '0.0000001' })).toThrow(/X402_USD_PER_CREDIT/);
  });
});
