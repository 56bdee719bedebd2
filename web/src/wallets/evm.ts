// EVM wallets through wagmi: injected wallets announce themselves by EIP-6963 (wagmi's
// multiInjectedProviderDiscovery turns each into a connector with its name and icon), and
// WalletConnect joins when the service has a project id. Sign-in signs an EIP-4361 message built
// with viem's createSiweMessage; the server checks it (including EIP-1271 contract wallets).
import { createSiweMessage } from 'viem/siwe';
import { createConfig, http, type Config, type Connector, type CreateConnectorFn } from 'wagmi';
import { connect, disconnect, signMessage, switchChain } from 'wagmi/actions';
import { base, bsc, mainnet, polygon } from 'wagmi/chains';
import type { NonceInfo } from '../api.ts';
import { SIGN_IN_STATEMENT } from './statement.ts';

export const SIGN_IN_CHAINS = [mainnet, base, polygon, bsc] as const;

export async function createWagmiConfig(walletConnectProjectId: string | null): Promise<Config> {
  const connectors: CreateConnectorFn[] = [];
  if (walletConnectProjectId) {
    // Loaded only when configured, so the first page stays small without it.
    const { walletConnect } = await import('wagmi/connectors');
    connectors.push(walletConnect({ projectId: walletConnectProjectId, showQrModal: true }));
  }
  return createConfig({
    chains: SIGN_IN_CHAINS,
    connectors,
    multiInjectedProviderDiscovery: true,
    // Sign-in needs no chain reads from the browser; transports exist because wagmi requires them.
    transports: { [mainnet.id]: http(), [base.id]: http(), [polygon.id]: http(), [bsc.id]: http() },
  });
}

/** Connectors a person can pick: EIP-6963 wallets (and WalletConnect), not wagmi's generic fallback. */
export function pickable(connectors: readonly Connector[]): Connector[] {
  return connectors.filter((c) => c.type === 'walletConnect' || c.id !== 'injected');
}

/** The wallet is on another network than the one chosen for sign-in, and did not switch. */
export class WrongChainError extends Error {
  constructor(walletChain: string, chosenChain: string, cause: unknown) {
    super(
      `Your wallet is on ${walletChain}, not ${chosenChain}. Approve the network switch in your wallet, or pick ${walletChain} in the Chain list, and try again.`,
      { cause },
    );
    this.name = 'WrongChainError';
  }
}

export async function signInWithEvm(
  config: Config,
  connector: Connector,
  chainId: number,
  nonce: () => Promise<NonceInfo>,
  statement: string = SIGN_IN_STATEMENT,
): Promise<{ message: string; signature: string }> {
  const { accounts } = await connect(config, { connector }).catch(async (err: unknown) => {
    // Already connected from an earlier attempt: reuse that connection.
    if (err instanceof Error && err.name === 'ConnectorAlreadyConnectedError') {
      return { accounts: (await connector.getAccounts()) as readonly `0x${string}`[] };
    }
    throw err;
  });
  const address = accounts[0];
  if (!address) throw new Error('The wallet shared no account.');
  // The message names the chosen chain: a wallet on another network is asked to switch first.
  const current = await connector.getChainId();
  if (current !== chainId) {
    const nameOf = (id: number) => SIGN_IN_CHAINS.find((c) => c.id === id)?.name ?? `chain ${id}`;
    try {
      await switchChain(config, { connector, chainId });
    } catch (err) {
      await disconnect(config, { connector }).catch(() => {});
      throw new WrongChainError(nameOf(current), nameOf(chainId), err);
    }
  }
  const n = await nonce();
  const message = createSiweMessage({
    address,
    chainId,
    domain: n.domain,
    uri: n.uri,
    nonce: n.nonce,
    version: '1',
    statement,
    issuedAt: new Date(),
    expirationTime: new Date(n.expires_at),
  });
  try {
    const signature = await signMessage(config, { account: address, connector, message });
    return { message, signature };
  } finally {
    // The session is the dashboard's; the wallet connection is not needed after signing.
    await disconnect(config, { connector }).catch(() => {});
  }
}
