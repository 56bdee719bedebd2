// What every EVM tool shares: the chain parameter (Solana refused where EVM is needed),
// address and hash validation, and mapping JSON-RPC failures to coded errors.
import { isAddress } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { EVM_NETWORKS, type EvmNetwork } from '../../providers/evm/types.ts';

/** The chain of a tool that serves EVM networks only: solana is not offered (a 400 says why). */
export const chainSchema = z
  .enum(EVM_NETWORKS, { error: `one of ${EVM_NETWORKS.join(', ')}: this tool reads EVM chains only (not solana)` })
  .default('ethereum');

/** The chain of a tool that serves Solana as well. */
export const anyChainSchema = z.enum([...EVM_NETWORKS, 'solana']).default('ethereum');

export const addressSchema = z.string().trim().refine((s) => isAddress(s, { strict: false }), 'expected a 0x-prefixed 20-byte hex address');
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SOLANA_SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

/** An EVM or a Solana address; tools that take either check it matches the chain (requireFamily). */
export const walletAddressSchema = z
  .string()
  .trim()
  .refine((s) => isAddress(s, { strict: false }) || SOLANA_ADDRESS.test(s), 'expected a 0x EVM address or a base58 Solana address');
/** An EVM transaction hash or a Solana transaction signature. */
export const txIdSchema = z
  .string()
  .trim()
  .refine((s) => /^0x[0-9a-fA-F]{64}$/.test(s) || SOLANA_SIGNATURE.test(s), 'expected a 0x 32-byte transaction hash or a base58 Solana signature');

/** INVALID_PARAMS naming the field when a value of one chain family is given for the other. */
export function requireFamily(chain: EvmNetwork | 'solana', value: string, field: string): void {
  const isEvm = value.startsWith('0x');
  if (chain === 'solana' && isEvm) {
    throw new ApiError('INVALID_PARAMS', `${field} is an EVM value but chain is solana.`, { issues: [{ path: field, message: 'expected a base58 Solana value for chain solana' }] });
  }
  if (chain !== 'solana' && !isEvm) {
    throw new ApiError('INVALID_PARAMS', `${field} is a Solana value but chain is ${chain}; pass chain: "solana".`, { issues: [{ path: field, message: `expected a 0x value for chain ${chain}` }] });
  }
}

export const hashSchema = z.string().trim().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex hash');

export function evmNetwork(chain: EvmNetwork | 'solana', tool: string): EvmNetwork {
  if (chain === 'solana') {
    throw new ApiError('INVALID_PARAMS', `${tool} works on EVM chains; Solana is not served by it.`, {
      issues: [{ path: 'chain', message: `one of ${EVM_NETWORKS.join(', ')}` }],
    });
  }
  return chain;
}

/** True when the error or any error in its `cause` chain has this name (viem wraps transport errors). */
export function causedBy(err: unknown, name: string): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { name?: string }).name === name) return true;
  }
  return false;
}

/** Runs JSON-RPC work, turning transport failures into UPSTREAM_ERROR / UPSTREAM_TIMEOUT naming the chain. */
export async function rpc<T>(network: EvmNetwork, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const name = (err as { name?: string }).name ?? '';
    const provider = `evm:${network}`;
    if (causedBy(err, 'TimeoutError')) throw new ApiError('UPSTREAM_TIMEOUT', undefined, { provider });
    if (name === 'BlockNotFoundError' || name === 'TransactionNotFoundError' || name === 'TransactionReceiptNotFoundError') {
      throw new ApiError('NOT_FOUND', 'No such block or transaction on this chain.', { chain: network });
    }
    throw new ApiError('UPSTREAM_ERROR', undefined, { provider });
  }
}

export const gwei = (wei: bigint): number => Number(wei) / 1e9;
