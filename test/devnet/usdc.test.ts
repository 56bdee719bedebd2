// The devnet's payment token (issue 21): a USDC-like ERC-20 with EIP-3009 under USDC's EIP-712
// domain, funded payer wallets and a treasury, all in the manifest. Checked on the real anvil
// node with signatures made by viem, as a wallet and x402's exact scheme make them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, hashDomain, http, parseAbi, toHex, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { MNEMONIC, startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../payments/helpers.ts';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet();
});
afterAll(async () => {
  await devnet?.stop();
});

const abi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address, bytes32) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

const TYPES = TRANSFER_WITH_AUTHORIZATION_TYPES;

function clients() {
  const m = devnet.manifest;
  const chain = { ...foundry, rpcUrls: { default: { http: [m.rpc_url] } } };
  const transport = http(m.rpc_url);
  const payer = mnemonicToAccount(MNEMONIC, { addressIndex: m.payments.payers[0]!.mnemonic_index });
  const treasury = mnemonicToAccount(MNEMONIC, { addressIndex: m.payments.treasury.mnemonic_index });
  return {
    pub: createPublicClient({ chain, transport }),
    payer,
    treasury,
    submitter: createWalletClient({ account: treasury, chain, transport }),
    usdc: m.payments.usdc.address,
  };
}

/** A payer's signed authorization to pay the treasury `value`, valid in [validAfter, validBefore]. */
async function authorize(opts: { value: bigint; validAfter?: bigint; validBefore?: bigint; version?: string }) {
  const { payer, treasury, usdc } = clients();
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: payer.address,
    to: treasury.address,
    value: opts.value,
    validAfter: opts.validAfter ?? 0n,
    validBefore: opts.validBefore ?? now + 3600n,
    nonce: toHex(randomBytes(32)),
  };
  const signature = await payer.signTypedData({
    domain: { name: 'USD Coin', version: opts.version ?? '2', chainId: 31337, verifyingContract: usdc },
    types: TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return { ...message, signature };
}

async function submit(a: Awaited<ReturnType<typeof authorize>>): Promise<Hex> {
  const { pub, submitter, usdc } = clients();
  const args = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.signature] as const;
  await pub.simulateContract({ address: usdc, abi, functionName: 'transferWithAuthorization', args, account: submitter.account });
  const hash = await submitter.writeContract({ address: usdc, abi, functionName: 'transferWithAuthorization', args });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return hash;
}

const balance = (address: Address) => clients().pub.readContract({ address: clients().usdc, abi, functionName: 'balanceOf', args: [address] });

describe('the devnet USDC (EIP-3009)', () => {
  it('is in the manifest as USDC with 6 decimals under the domain "USD Coin" v2, and the payers hold their 10,000 USDC', async () => {
    const { pub, usdc } = clients();
    const p = devnet.manifest.payments;
    expect(await pub.readContract({ address: usdc, abi, functionName: 'symbol' })).toBe('USDC');
    expect(await pub.readContract({ address: usdc, abi, functionName: 'name' })).toBe('USD Coin');
    expect(await pub.readContract({ address: usdc, abi, functionName: 'decimals' })).toBe(6);
    const separator = await pub.readContract({ address: usdc, abi, functionName: 'DOMAIN_SEPARATOR' });
    const EIP712Domain = [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ] as const;
    expect(separator).toBe(hashDomain({ domain: { name: 'USD Coin', version: '2', chainId: 31337n, verifyingContract: usdc }, types: { EIP712Domain } }));
    expect(p.payers).toHaveLength(3);
    for (const payer of p.payers) expect(await balance(payer.address)).toBe(BigInt(payer.usdc));
    expect(BigInt(p.payers[0]!.usdc)).toBe(10_000_000_000n);
    expect(await pub.getBalance({ address: p.treasury.address })).toBeGreaterThan(0n);
  });

  it('a signed authorization moves exactly its value to the treasury, once: the nonce is then used and a replay reverts', async () => {
    const { payer, treasury, usdc, pub } = clients();
    const [payerBefore, treasuryBefore] = [await balance(payer.address), await balance(treasury.address)];
    const a = await authorize({ value: 1_500_000n });
    await submit(a);
    expect(await balance(treasury.address)).toBe(treasuryBefore + 1_500_000n);
    expect(await balance(payer.address)).toBe(payerBefore - 1_500_000n);
    expect(await pub.readContract({ address: usdc, abi, functionName: 'authorizationState', args: [a.from, a.nonce] })).toBe(true);
    await expect(submit(a)).rejects.toThrow(/used or canceled/);
  });

  it('refuses an expired authorization, one not yet valid, one signed under another domain version, and a receive by someone else', async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    await expect(submit(await authorize({ value: 1n, validBefore: now - 10n }))).rejects.toThrow(/expired/);
    await expect(submit(await authorize({ value: 1n, validAfter: now + 3600n, validBefore: now + 7200n }))).rejects.toThrow(/not yet valid/);
    await expect(submit(await authorize({ value: 1n, version: '1' }))).rejects.toThrow(/invalid signature/);
    const { pub, submitter, usdc } = clients();
    const a = await authorize({ value: 1n });
    const other = mnemonicToAccount(MNEMONIC, { addressIndex: devnet.manifest.payments.payers[1]!.mnemonic_index });
    await expect(
      pub.simulateContract({ address: usdc, abi, functionName: 'receiveWithAuthorization', args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.signature], account: other }),
    ).rejects.toThrow(/caller must be the payee/);
    expect(submitter.account.address).toBe(a.to);
  });
});
