// Checks a wallet's sign-in message and signature. EVM: Sign-In with Ethereum (EIP-4361), parsed
// and validated with viem, the signature checked with viem's verifyMessage — ECDSA recovery first
// (no network for ordinary accounts), then, for smart-contract wallets, an EIP-1271
// isValidSignature call (through viem's ERC-6492 validator) on the chain's RPC. Solana: the
// Sign-In With Solana text (the same fields as EIP-4361), parsed and ed25519-verified with
// @solana/wallet-standard-util, the Wallet Standard's own helpers.
import { base58 } from '@scure/base';
import { parseSignInMessageText, verifySignIn } from '@solana/wallet-standard-util';
import { createPublicClient, http, isHex, verifyMessage, type PublicClient } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import type { EvmNetwork } from '../providers/evm/chains.ts';

/** The chains a dashboard sign-in may name (DESIGN.md §5), by EIP-155 id. */
export const SIGN_IN_CHAINS: Record<number, EvmNetwork> = { 1: 'ethereum', 8453: 'base', 137: 'polygon', 56: 'bsc' };

export type RefusalReason =
  | 'malformed_message'
  | 'wrong_domain'
  | 'wrong_uri'
  | 'unsupported_chain'
  | 'nonce_mismatch'
  | 'stale_message'
  | 'message_expired'
  | 'bad_signature'
  | 'contract_chain';

export type VerifiedWallet =
  | { ok: true; family: 'evm'; address: string; network: EvmNetwork; nonce: string }
  | { ok: true; family: 'solana'; address: string; nonce: string }
  | { ok: false; reason: RefusalReason };

export interface Expectation {
  /** The dashboard's host (and port), which the message's domain must equal. */
  domain: string;
  /** The dashboard's origin, which the message's URI must start from. */
  origin: string;
  now: Date;
  /** A message issued longer ago than this (or in the future by more than the skew) is refused. */
  maxAgeSeconds: number;
}

const CLOCK_SKEW_MS = 60_000;

function sameOrigin(uri: string | undefined, origin: string): boolean {
  if (!uri) return false;
  try {
    return new URL(uri).origin === origin;
  } catch {
    return false;
  }
}

function freshness(issuedAt: Date | undefined, expirationTime: Date | undefined, notBefore: Date | undefined, e: Expectation): RefusalReason | null {
  if (!issuedAt || Number.isNaN(issuedAt.getTime())) return 'malformed_message';
  const now = e.now.getTime();
  if (issuedAt.getTime() > now + CLOCK_SKEW_MS || issuedAt.getTime() < now - e.maxAgeSeconds * 1000 - CLOCK_SKEW_MS) return 'stale_message';
  if (expirationTime && !(expirationTime.getTime() > now)) return 'message_expired';
  if (notBefore && !(notBefore.getTime() <= now + CLOCK_SKEW_MS)) return 'stale_message';
  return null;
}

/** One verification client per network, without a chain object so no verifier address is assumed. */
export function signInClients(rpcUrls: Record<EvmNetwork, string>, timeoutMs: number): (network: EvmNetwork) => PublicClient {
  const clients = new Map<EvmNetwork, PublicClient>();
  return (network) => {
    let c = clients.get(network);
    if (!c) {
      c = createPublicClient({ transport: http(rpcUrls[network], { timeout: timeoutMs, retryCount: 1 }) });
      clients.set(network, c);
    }
    return c;
  };
}

/** Parses and checks an EIP-4361 message; the nonce it names is returned for the caller to consume. */
export function checkSiweMessage(message: string, e: Expectation): { ok: true; address: `0x${string}`; network: EvmNetwork; nonce: string } | { ok: false; reason: RefusalReason } {
  let parsed: ReturnType<typeof parseSiweMessage>;
  try {
    parsed = parseSiweMessage(message);
  } catch {
    return { ok: false, reason: 'malformed_message' };
  }
  if (!parsed.address || !parsed.nonce || parsed.version !== '1' || parsed.chainId === undefined) return { ok: false, reason: 'malformed_message' };
  if (parsed.domain !== e.domain) return { ok: false, reason: 'wrong_domain' };
  if (!sameOrigin(parsed.uri, e.origin)) return { ok: false, reason: 'wrong_uri' };
  const network = SIGN_IN_CHAINS[parsed.chainId];
  if (!network) return { ok: false, reason: 'unsupported_chain' };
  const stale = freshness(parsed.issuedAt, parsed.expirationTime, parsed.notBefore, e);
  if (stale) return { ok: false, reason: stale };
  // viem's own validation on top: nonce syntax, version, address checksum, time bounds.
  if (!validateSiweMessage({ message: parsed, domain: e.domain, time: e.now })) return { ok: false, reason: 'malformed_message' };
  return { ok: true, address: parsed.address, network, nonce: parsed.nonce };
}

/**
 * 'key': the address's own ECDSA signature, valid on every chain. 'contract': valid only through
 * the contract at that address on the chain asked (EIP-1271 / ERC-6492) — a contract wallet, which
 * is a wallet on that chain only (the same address elsewhere may belong to someone else).
 */
export type SignatureProof = 'key' | 'contract';

export async function verifySiweSignature(
  client: PublicClient,
  input: { address: `0x${string}`; message: string; signature: string },
): Promise<SignatureProof | false> {
  if (!isHex(input.signature)) return false;
  // ECDSA recovery first (no network for ordinary accounts), then the chain.
  const byKey = await verifyMessage({ address: input.address, message: input.message, signature: input.signature }).catch(() => false);
  if (byKey) return 'key';
  const valid = await client.verifyMessage({ address: input.address, message: input.message, signature: input.signature });
  if (valid) return 'contract';
  // viem reports a failed RPC call as an invalid signature. Ask the node something trivial, so an
  // unreachable chain throws (the caller answers 502) instead of refusing a good contract wallet.
  await client.getChainId();
  return false;
}

const SOLANA_CHAINS = new Set([undefined, 'mainnet', 'solana:mainnet']);

/** Parses and checks a Sign-In With Solana message and its ed25519 signature (base64). */
export function verifySolanaSignIn(message: string, signatureBase64: string, e: Expectation): VerifiedWallet {
  const parsed = parseSignInMessageText(message);
  if (!parsed?.nonce || (parsed.version !== undefined && parsed.version !== '1')) return { ok: false, reason: 'malformed_message' };
  if (parsed.domain !== e.domain) return { ok: false, reason: 'wrong_domain' };
  if (!sameOrigin(parsed.uri, e.origin)) return { ok: false, reason: 'wrong_uri' };
  if (!SOLANA_CHAINS.has(parsed.chainId)) return { ok: false, reason: 'unsupported_chain' };
  const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));
  const stale = freshness(date(parsed.issuedAt), date(parsed.expirationTime), date(parsed.notBefore), e);
  if (stale) return { ok: false, reason: stale };
  let publicKey: Uint8Array;
  try {
    publicKey = base58.decode(parsed.address);
  } catch {
    return { ok: false, reason: 'malformed_message' };
  }
  const signature = Buffer.from(signatureBase64, 'base64');
  if (publicKey.length !== 32 || signature.length !== 64) return { ok: false, reason: 'bad_signature' };
  const signedMessage = new TextEncoder().encode(message);
  const valid = verifySignIn(parsed, {
    account: { address: parsed.address, publicKey, chains: [], features: [] },
    signedMessage,
    signature: new Uint8Array(signature),
  });
  if (!valid) return { ok: false, reason: 'bad_signature' };
  return { ok: true, family: 'solana', address: parsed.address, nonce: parsed.nonce };
}
