// The devnet's USDC speaks x402's `exact` EVM scheme (issue 21): the official client
// (@x402/evm's ExactEvmScheme) signs an EIP-3009 authorization for payment requirements naming
// the devnet chain, token and treasury with USDC's domain in `extra`, and @x402/evm's own
// facilitator verifies and settles it on anvil. The treasury's balance rises by the amount; the
// same payment cannot be settled twice.
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitator } from '@x402/evm/exact/facilitator';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseAbi, publicActions } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { MNEMONIC, startDevnet, type Devnet } from '../../server/devnet/devnet.ts';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet();
});
afterAll(async () => {
  await devnet?.stop();
});

describe('x402 exact scheme on the devnet USDC', () => {
  it('the official client pays, the @x402/evm facilitator verifies and settles, the treasury receives the amount once', async () => {
    const m = devnet.manifest;
    const chain = { ...foundry, rpcUrls: { default: { http: [m.rpc_url] } } };
    const pub = createPublicClient({ chain, transport: http(m.rpc_url) });
    const payer = mnemonicToAccount(MNEMONIC, { addressIndex: m.payments.payers[2]!.mnemonic_index });
    const settler = mnemonicToAccount(MNEMONIC, { addressIndex: m.payments.treasury.mnemonic_index });
    const requirements = {
      scheme: 'exact',
      network: `eip155:${m.chain_id}`,
      asset: m.payments.usdc.address,
      amount: '25000',
      payTo: m.payments.treasury.address,
      maxTimeoutSeconds: 60,
      extra: { name: m.payments.usdc.eip712.name, version: m.payments.usdc.eip712.version },
    } as const;
    const created = await new ExactEvmClient(toClientEvmSigner(payer, pub)).createPaymentPayload(2, requirements);
    const payload = { x402Version: 2, accepted: requirements, payload: created.payload, resource: { url: 'http://127.0.0.1/x402/mcp/market-intelligence', description: 'a tools/call', mimeType: 'application/json' } };

    const wallet = createWalletClient({ account: settler, chain, transport: http(m.rpc_url) }).extend(publicActions);
    // viem's verifyTypedData is typed more narrowly than the signer interface @x402/evm declares;
    // at run time it is exactly what the facilitator calls.
    const facilitator = new ExactEvmFacilitator(toFacilitatorEvmSigner(wallet as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]));
    const balanceOf = parseAbi(['function balanceOf(address) view returns (uint256)']);
    const treasuryBalance = () => pub.readContract({ address: m.payments.usdc.address, abi: balanceOf, functionName: 'balanceOf', args: [m.payments.treasury.address] });
    const before = await treasuryBalance();

    expect(await facilitator.verify(payload, requirements)).toMatchObject({ isValid: true, payer: payer.address });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: `eip155:${m.chain_id}`, payer: payer.address });
    expect(await treasuryBalance()).toBe(before + 25_000n);

    // The authorization's nonce is spent: the same payment neither verifies nor settles again.
    expect((await facilitator.verify(payload, requirements)).isValid).toBe(false);
    const again = await facilitator.settle(payload, requirements).catch((err: unknown) => ({ success: false, error: String(err) }));
    expect(again.success).toBe(false);
    expect(await treasuryBalance()).toBe(before + 25_000n);
  });
});
