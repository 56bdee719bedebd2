// The EVM networks the service knows and their default public RPC endpoints: plain data, so
// configuration can name them without loading viem (server/providers/evm/chains.ts does that).
export const EVM_NETWORKS = ['ethereum', 'base', 'polygon', 'bsc'] as const;
export type EvmNetwork = (typeof EVM_NETWORKS)[number];

export const DEFAULT_RPC_URLS: Record<EvmNetwork, string> = {
  ethereum: 'https://ethereum-rpc.publicnode.com',
  base: 'https://mainnet.base.org',
  polygon: 'https://polygon-rpc.com',
  bsc: 'https://bsc-dataseed.bnbchain.org',
};
