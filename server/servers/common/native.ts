// The native coin of each chain we serve, and the market asset that prices it.
import type { EvmNetwork } from '../../providers/evm/types.ts';

export const NATIVE: Record<EvmNetwork | 'solana', { symbol: string; name: string; decimals: number; asset_id: string }> = {
  ethereum: { symbol: 'ETH', name: 'Ether', decimals: 18, asset_id: 'ethereum' },
  base: { symbol: 'ETH', name: 'Ether', decimals: 18, asset_id: 'ethereum' },
  polygon: { symbol: 'POL', name: 'Polygon', decimals: 18, asset_id: 'matic-network' },
  bsc: { symbol: 'BNB', name: 'BNB', decimals: 18, asset_id: 'binancecoin' },
  solana: { symbol: 'SOL', name: 'Solana', decimals: 9, asset_id: 'solana' },
};
