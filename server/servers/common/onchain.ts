// On-chain reads that several servers share: bounded block ranges, Transfer-log scans, EIP-1967
// proxy slots, optional view calls and ERC-20 metadata. Callers wrap them in rpc() so transport
// failures become coded errors.
import { getAddress, parseAbiItem, type AbiFunction, type Address, type Hex, type PublicClient } from 'viem';
import { ApiError } from '../../errors.ts';
import type { ChainCache } from '../../providers/evm/cache.ts';

/** The widest block range one call scans: bounds the node's work and the answer's size. */
export const MAX_BLOCK_RANGE = 10_000;
export const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** EIP-1967 storage slots: keccak256('eip1967.proxy.implementation') - 1, and the admin and beacon slots. */
export const EIP1967_SLOTS = {
  implementation: '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc',
  admin: '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103',
  beacon: '0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50',
} as const;

export interface BlockRange {
  from: number;
  to: number;
  latest: number;
}

/**
 * from_block/to_block as asked, defaulted to the last `defaultBlocks` blocks, checked against the
 * bound `max` (which applies to the range asked for; blocks past the head are then dropped).
 * The head is read fresh (the clients do not cache eth_blockNumber).
 */
export async function resolveBlockRange(
  client: PublicClient,
  args: { from_block?: number; to_block?: number },
  { max = MAX_BLOCK_RANGE, defaultBlocks = max }: { max?: number; defaultBlocks?: number } = {},
): Promise<BlockRange> {
  const latest = Number(await client.getBlockNumber());
  const requestedTo = args.to_block ?? latest;
  const from = args.from_block ?? Math.max(0, requestedTo - defaultBlocks + 1);
  if (from > requestedTo) throw new ApiError('INVALID_PARAMS', 'from_block is after to_block.', { issues: [{ path: 'from_block', message: 'must not be after to_block' }] });
  if (requestedTo - from + 1 > max) {
    throw new ApiError('INVALID_PARAMS', `A block range covers at most ${max} blocks.`, {
      issues: [{ path: 'from_block', message: `at most ${max} blocks from from_block to to_block` }],
    });
  }
  pastHead(args, latest);
  return { from, to: Math.min(requestedTo, latest), latest };
}

/** A block past the chain's head is the caller's mistake: 400 naming the argument and the head. */
export function pastHead(args: { from_block?: number | undefined; to_block?: number | undefined }, latest: number): void {
  for (const field of ['to_block', 'from_block'] as const) {
    const n = args[field];
    if (n !== undefined && n > latest) {
      throw new ApiError('INVALID_PARAMS', `${field} ${n} is past the chain's latest block ${latest}.`, {
        issues: [{ path: field, message: `at most the latest block, ${latest}` }],
        latest_block: latest,
      });
    }
  }
}

export interface TransferLog {
  block: number;
  tx_hash: Hex;
  log_index: number;
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
}

/** ERC-20 Transfer logs of a token and/or an address (either side), oldest first, without duplicates. */
export async function transferLogs(
  client: PublicClient,
  q: { token?: Address; address?: Address; from: number; to: number },
): Promise<TransferLog[]> {
  const range = { fromBlock: BigInt(q.from), toBlock: BigInt(q.to) };
  const logs = q.address
    ? (
        await Promise.all([
          client.getLogs({ address: q.token, event: TRANSFER_EVENT, args: { from: q.address }, ...range }),
          client.getLogs({ address: q.token, event: TRANSFER_EVENT, args: { to: q.address }, ...range }),
        ])
      ).flat()
    : await client.getLogs({ address: q.token, event: TRANSFER_EVENT, ...range });
  const seen = new Set<string>();
  const out: TransferLog[] = [];
  for (const l of logs) {
    const id = `${l.transactionHash}:${l.logIndex}`;
    if (seen.has(id) || !l.args.from || !l.args.to || l.args.value === undefined) continue;
    seen.add(id);
    out.push({
      block: Number(l.blockNumber),
      tx_hash: l.transactionHash!,
      log_index: l.logIndex!,
      token: getAddress(l.address),
      from: getAddress(l.args.from),
      to: getAddress(l.args.to),
      value: l.args.value,
    });
  }
  return out.sort((a, b) => a.block - b.block || a.log_index - b.log_index);
}

/** A view call that answers null instead of throwing when the contract does not have it. */
export async function tryCall<T>(client: PublicClient, address: Address, signature: string, args: unknown[] = []): Promise<T | null> {
  const fn = parseAbiItem(signature) as AbiFunction;
  try {
    return (await client.readContract({ address, abi: [fn], functionName: fn.name, args })) as T;
  } catch (err) {
    // Only "the contract does not answer this" is an answer; transport failures stay errors.
    const name = (err as { name?: string }).name ?? '';
    if (name.startsWith('ContractFunction') || name === 'AbiDecodingZeroDataError' || name === 'AbiDecodingDataSizeTooSmallError') return null;
    throw err;
  }
}

export interface ProxyInfo {
  standard: 'EIP-1967';
  implementation: Address | null;
  admin: Address | null;
  beacon: Address | null;
}

/** The EIP-1967 slots of a contract; null when it is not such a proxy. */
export async function eip1967Proxy(client: PublicClient, address: Address): Promise<ProxyInfo | null> {
  const slot = async (s: Hex) => {
    const v = await client.getStorageAt({ address, slot: s });
    return v && BigInt(v) !== 0n ? getAddress(`0x${v.slice(-40)}`) : null;
  };
  const [implementation, admin, beacon] = await Promise.all([slot(EIP1967_SLOTS.implementation), slot(EIP1967_SLOTS.admin), slot(EIP1967_SLOTS.beacon)]);
  return implementation || beacon ? { standard: 'EIP-1967', implementation, admin, beacon } : null;
}

export interface Erc20Metadata {
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  total_supply: bigint | null;
}

/**
 * name/symbol/decimals/totalSupply in one batched round trip; a missing function reads as null.
 * With a cache, name/symbol/decimals (which tokens do not change) are read once per TTL; the
 * supply is always read live.
 */
export async function erc20Metadata(client: PublicClient, address: Address, cache?: { cache: ChainCache; network: string }): Promise<Erc20Metadata> {
  const fixed = () =>
    Promise.all([
      tryCall<string>(client, address, 'function name() view returns (string)'),
      tryCall<string>(client, address, 'function symbol() view returns (string)'),
      tryCall<number>(client, address, 'function decimals() view returns (uint8)'),
    ]);
  const [[name, symbol, decimals], total_supply] = await Promise.all([
    cache ? cache.cache.metadata(`${cache.network}:erc20:${address.toLowerCase()}`, fixed) : fixed(),
    tryCall<bigint>(client, address, 'function totalSupply() view returns (uint256)'),
  ]);
  return { name, symbol, decimals: decimals === null ? null : Number(decimals), total_supply };
}
