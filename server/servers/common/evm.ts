// What every EVM tool shares: the chain parameter (Solana refused where EVM is needed),
// address and hash validation, and mapping JSON-RPC failures to coded errors.
import { isAddress } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/chains.ts';

export const chainSchema = z
  .enum([...EVM_NETWORKS, 'solana'])
  .default('ethereum')
  .describe('ethereum, base, polygon or bsc (solana is not served by this EVM tool).');

export const addressSchema = z.string().trim().refine((s) => isAddress(s, { strict: false }), 'expected a 0x-prefixed 20-byte hex address');
export const hashSchema = z.string().trim().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex hash');

export function evmNetwork(chain: EvmNetwork | 'solana', tool: string): EvmNetwork {
  if (chain === 'solana') {
    throw new ApiError('INVALID_PARAMS', `${tool} works on EVM chains; Solana is not served by it.`, {
      issues: [{ path: 'chain', message: `one of ${EVM_NETWORKS.join(', ')}` }],
    });
  }
  return chain;
}

/** Runs JSON-RPC work, turning transport failures into UPSTREAM_ERROR / UPSTREAM_TIMEOUT. */
export async function rpc<T>(network: EvmNetwork, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const name = (err as { name?: string }).name ?? '';
    const provider = `evm:${network}`;
    if (name === 'TimeoutError') throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider });
    if (name === 'BlockNotFoundError' || name === 'TransactionNotFoundError' || name === 'TransactionReceiptNotFoundError') {
      throw new ApiError('NOT_FOUND', 'No such block or transaction on this chain.', { chain: network });
    }
    throw new ApiError('UPSTREAM_ERROR', undefined, { provider });
  }
}

export const gwei = (wei: bigint): number => Number(wei) / 1e9;
