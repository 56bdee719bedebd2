// Who verifies and settles x402 payments: @x402/evm's own facilitator in this process, with the
// settlement key from a secret paying the gas of transferWithAuthorization, or a remote
// facilitator over HTTP. Either way the gateway sees the x402 FacilitatorClient's two calls.
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { X402Config } from '../config.ts';

export interface Facilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

export function createFacilitator(config: X402Config, timeoutMs: number): Facilitator {
  if (config.facilitatorUrl) return new HTTPFacilitatorClient({ url: config.facilitatorUrl, timeoutMs: Math.max(timeoutMs, 30_000) });
  if (!config.settlementKey || !config.rpcUrl) throw new Error('x402: self-hosted settlement needs X402_SETTLEMENT_KEY and an RPC URL (X402_RPC_URL)');
  const chain = defineChain({
    id: config.chainId,
    name: config.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
  });
  // The key stays inside the viem account; nothing here logs it or the client.
  const wallet = createWalletClient({ account: privateKeyToAccount(config.settlementKey as `0x${string}`), chain, transport: http(config.rpcUrl, { timeout: timeoutMs }) }).extend(
    publicActions,
  );
  const facilitator = new x402Facilitator();
  // viem's verifyTypedData is typed more narrowly than the signer interface @x402/evm declares;
  // at run time it is exactly what the facilitator calls.
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner(wallet as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]),
    networks: config.network as `eip155:${string}`,
  });
  return facilitator;
}
