// Pieces of tool output schemas (ToolDefinition.output) that several servers answer with: an
// asset, a range of days, a chain that could not be read, the "nothing to show" pair.
import { z } from 'zod';
import { EVM_NETWORKS } from '../../providers/evm/types.ts';

export const assetRefShape = z.object({ id: z.string(), symbol: z.string(), name: z.string() });

/** Inclusive UTC days, YYYY-MM-DD. */
export const dayRangeShape = z.object({ from: z.string(), to: z.string() });

export const stanceShape = z.enum(['bullish', 'bearish', 'neutral']);

export const chainShape = z.enum([...EVM_NETWORKS, 'solana']);

/** A chain the call could not read (the others answer): its error code and the provider that failed. */
export const chainFailureShape = z.object({ chain: chainShape, code: z.string(), provider: z.string() });

/** Present only when the answer holds nothing for what was asked: covered false and why. */
export const notCoveredFields = {
  covered: z.literal(false).optional(),
  reason: z.string().optional(),
};
