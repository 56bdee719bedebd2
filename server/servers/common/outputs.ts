// Output schemas several tools share (the `data` parts of their answers, ToolDefinition.output):
// an asset as answers name it, a dated price, candles and quotes as the market provider gives them.
import { z } from 'zod';

export const assetRef = z.object({ id: z.string(), symbol: z.string(), name: z.string() });

export const pricePoint = z.object({ date: z.string(), price: z.number() });

/** A UTC day, YYYY-MM-DD (JSON Schema format "date", which clients check). */
export const day = z.iso.date();

export const candle = z.object({
  date: day,
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  volume_usd: z.number().nullable(),
  source: z.string(),
  partial_week_days: z.number().int().min(1).max(6).optional().describe('Weekly candles only: on a week the data covers in part (its last), the days it holds.'),
});

/** Beside every volume_24h_usd: what it counts (common/volume.ts quoteVolume). */
export const volumeSourceField = z.string().nullable().describe('What volume_24h_usd counts.');

/** Beside candles with volumes: what each candle source's volume counts (common/volume.ts candleVolumeSources). */
export const volumeSourcesField = z.record(z.string(), z.string()).describe("By candle source: what its volume_usd counts.");

export const quote = z.object({
  asset_id: z.string(),
  symbol: z.string(),
  name: z.string(),
  price_usd: z.number(),
  change_24h_pct: z.number().nullable(),
  change_7d_pct: z.number().nullable(),
  change_30d_pct: z.number().nullable(),
  volume_24h_usd: z.number().nullable(),
  volume_source: volumeSourceField,
  market_cap_usd: z.number().nullable(),
  market_cap_as_of: z.string().nullable().optional(),
  market_cap_note: z.string().optional(),
  as_of: z.string(),
  source: z.string(),
});

/** An entry of the asset registry (AssetEntry), as search answers list it. */
export const assetEntry = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  aliases: z.array(z.string()),
  platforms: z.array(z.object({ chain: z.string(), address: z.string() })),
  has_prices: z.boolean(),
  market_cap_rank: z.number().nullable().optional(),
});

/** An address's label (labels.ts AddressLabel): its name tag, kind and where it comes from. */
export const addressLabel = z.object({ label: z.string(), kind: z.string(), tags: z.array(z.string()).optional(), source: z.string() });

export const proxyInfo = z.object({
  standard: z.literal('EIP-1967'),
  implementation: z.string().nullable(),
  admin: z.string().nullable(),
  beacon: z.string().nullable(),
});

/** A transaction fee: in the native coin (decimal string), and in USD at the coin's latest price. */
export const nativeFee = z.object({
  native: z.string(),
  symbol: z.string(),
  usd: z.number().nullable(),
  usd_price: z.object({ price_usd: z.number(), as_of: z.string(), source: z.string() }).nullable(),
});

/** The EVM network an on-chain answer is from. */
export const evmChain = z.enum(['ethereum', 'base', 'polygon', 'bsc']);
