// x402 payments signed by hand on the devnet's USDC (EIP-3009 TransferWithAuthorization), so the
// tests can make the bad ones a wallet never would, and read whether one was used on chain.
import { randomBytes } from 'node:crypto';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { parseAbi, toHex, type Address, type LocalAccount } from 'viem';
import type { DevnetManifest } from '../../server/devnet/devnet.ts';
import { devnetClients, TRANSFER_WITH_AUTHORIZATION_TYPES } from '../payments/helpers.ts';

/** What the service asks for one call at `price` base units of the devnet's USDC. */
export function devnetRequirements(m: DevnetManifest, price: bigint): PaymentRequirements {
  return {
    scheme: 'exact',
    network: `eip155:${m.chain_id}`,
    asset: m.payments.usdc.address,
    amount: price.toString(),
    payTo: m.payments.treasury.address,
    maxTimeoutSeconds: 120,
    extra: { name: 'USD Coin', version: '2' },
  };
}

export interface AuthorizationOptions {
  validAfter?: bigint;
  validBefore?: bigint;
  domainName?: string;
  /** Who signs: `from` itself unless forging. */
  signer?: LocalAccount;
  value?: bigint;
}

/** A PAYMENT-SIGNATURE header: an authorization naming `from`, for `requirements`. */
export async function signedPayment(m: DevnetManifest, requirements: PaymentRequirements, from: LocalAccount | Address, opts: AuthorizationOptions = {}): Promise<string> {
  const fromAddress = typeof from === 'string' ? from : from.address;
  const signer = opts.signer ?? (typeof from === 'string' ? undefined : from);
  if (!signer) throw new Error('signedPayment: give a signer when `from` is only an address');
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: fromAddress,
    to: requirements.payTo as Address,
    value: opts.value ?? BigInt(requirements.amount),
    validAfter: opts.validAfter ?? now - 600n,
    validBefore: opts.validBefore ?? now + 120n,
    nonce: toHex(randomBytes(32)),
  };
  const signature = await signer.signTypedData({
    domain: { name: opts.domainName ?? 'USD Coin', version: '2', chainId: m.chain_id, verifyingContract: m.payments.usdc.address },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: requirements,
    payload: {
      signature,
      authorization: { ...authorization, value: authorization.value.toString(), validAfter: authorization.validAfter.toString(), validBefore: authorization.validBefore.toString() },
    },
  };
  return encodePaymentSignatureHeader(payload);
}

/** Whether the authorization in a PAYMENT-SIGNATURE header was used (settled) on chain. */
export async function authorizationUsed(m: DevnetManifest, from: Address, header: string): Promise<boolean> {
  const nonce = (JSON.parse(Buffer.from(header, 'base64').toString()) as { payload: { authorization: { nonce: `0x${string}` } } }).payload.authorization.nonce;
  return devnetClients(m).pub.readContract({
    address: m.payments.usdc.address,
    abi: parseAbi(['function authorizationState(address, bytes32) view returns (bool)']),
    functionName: 'authorizationState',
    args: [from, nonce],
  });
}
