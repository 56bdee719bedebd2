// Paying an order from an EVM wallet: wagmi connects the wallet the person picked (EIP-6963 or
// WalletConnect), the wallet is asked to switch to the order's chain, and the wallet itself sends
// an ERC-20 transfer of exactly the order's amount (base units, a bigint) to the treasury. The
// transfer goes through viem over the wallet's own EIP-1193 provider, so the chain id may be any
// the service names (a devnet's too), not only those the sign-in config knows.
import { createWalletClient, custom, erc20Abi, numberToHex, type EIP1193Provider } from 'viem';
import type { Config, Connector } from 'wagmi';
import { connect, disconnect } from 'wagmi/actions';
import type { OrderInfo } from '../api.ts';

export async function payWithEvm(config: Config, connector: Connector, order: OrderInfo, chainId: number): Promise<`0x${string}`> {
  const { accounts } = await connect(config, { connector }).catch(async (err: unknown) => {
    if (err instanceof Error && err.name === 'ConnectorAlreadyConnectedError') return { accounts: (await connector.getAccounts()) as readonly `0x${string}`[] };
    throw err;
  });
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account.');
  try {
    const provider = (await connector.getProvider()) as EIP1193Provider;
    const current = Number(await provider.request({ method: 'eth_chainId' }));
    if (current !== chainId) await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: numberToHex(chainId) }] });
    const wallet = createWalletClient({ account, transport: custom(provider) });
    return await wallet.writeContract({
      chain: null,
      address: order.token as `0x${string}`,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [order.treasury as `0x${string}`, BigInt(order.amount)],
    });
  } finally {
    await disconnect(config, { connector }).catch(() => {});
  }
}
