// read_contract and get_contract_info: view calls, and what a contract is (proxy, standards, owner).
import { getAddress, parseAbiItem, type AbiFunction, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, chainSchema, evmNetwork, rpc } from '../common/evm.ts';
import type { ServerDeps } from '../deps.ts';

// EIP-1967 storage slots: keccak256('eip1967.proxy.implementation') - 1, and the admin and beacon slots.
const SLOTS = {
  implementation: '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc',
  admin: '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103',
  beacon: '0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50',
} as const;
const INTERFACES = { erc165: '0x01ffc9a7', erc721: '0x80ac58cd', erc1155: '0xd9b67a26' } as const;

const toJson = (v: unknown): unknown =>
  typeof v === 'bigint' ? v.toString() : Array.isArray(v) ? v.map(toJson) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)])) : v;

export function contractTools({ evm, labels }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'read_contract',
      description: 'Returns the result of a view call (eth_call) of a contract function given by its signature, e.g. "function balanceOf(address) view returns (uint256)", with arguments.',
      input: z
        .object({
          chain: chainSchema,
          address: addressSchema,
          signature: z.string().trim().min(10).max(500).describe('Human-readable ABI: "function name(type,...) view returns (type,...)".'),
          args: z.array(z.union([z.string().max(1000), z.number(), z.boolean()])).max(20).default([]),
          block: z.number().int().min(0).optional().describe('Read at this block (default: latest).'),
        })
        .strict(),
      credits: 2,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'read_contract');
        let fn: AbiFunction;
        try {
          const item = parseAbiItem(args.signature.startsWith('function ') ? args.signature : `function ${args.signature}`);
          if (item.type !== 'function') throw new Error('not a function');
          fn = item;
        } catch {
          throw new ApiError('INVALID_PARAMS', 'The signature is not a Solidity function signature.', {
            issues: [{ path: 'signature', message: 'expected e.g. "function balanceOf(address) view returns (uint256)"' }],
          });
        }
        if (fn.inputs.length !== args.args.length) {
          throw new ApiError('INVALID_PARAMS', `${fn.name} takes ${fn.inputs.length} argument(s); ${args.args.length} given.`, {
            issues: [{ path: 'args', message: `expected ${fn.inputs.length} argument(s)` }],
          });
        }
        const callArgs = fn.inputs.map((input, i) => {
          const v = args.args[i]!;
          return /^u?int\d*$/.test(input.type) ? BigInt(v as string | number) : v;
        });
        const client = evm.client(network);
        const result = await rpc(network, async () => {
          try {
            return await client.readContract({
              address: args.address as Address,
              abi: [fn],
              functionName: fn.name,
              args: callArgs,
              ...(args.block !== undefined ? { blockNumber: BigInt(args.block) } : {}),
            });
          } catch (err) {
            const name = (err as { name?: string }).name ?? '';
            if (name === 'ContractFunctionExecutionError' || name === 'ContractFunctionRevertedError' || name === 'ContractFunctionZeroDataError') {
              throw new ApiError('INVALID_PARAMS', `The call reverted or returned nothing: ${(err as { shortMessage?: string }).shortMessage ?? 'no reason'}.`, {
                issues: [{ path: 'signature', message: 'the contract did not answer this call' }],
              });
            }
            throw err;
          }
        });
        return {
          data: { chain: network, address: getAddress(args.address), function: fn.name, outputs: fn.outputs.map((o) => o.type), result: toJson(result) },
          source: `rpc:${network}`,
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'get_contract_info',
      description: 'Returns what a contract is: bytecode size, EIP-1967 proxy with its implementation and admin, ERC-165 interfaces, whether it is an ERC-20, ERC-721 or ERC-1155, and its owner.',
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      credits: 2,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_contract_info');
        const client = evm.client(network);
        const address = getAddress(args.address);
        const code = await rpc(network, () => client.getCode({ address }));
        if (!code || code === '0x') throw new ApiError('NOT_FOUND', 'No contract at this address (it is an account or empty).', { address, chain: network });
        const slotAddress = async (slot: Hex) => {
          const v = await client.getStorageAt({ address, slot });
          return v && BigInt(v) !== 0n ? getAddress(`0x${v.slice(-40)}`) : null;
        };
        const tryCall = async <T>(signature: string, callArgs: unknown[] = []): Promise<T | null> => {
          try {
            const fn = parseAbiItem(signature) as AbiFunction;
            return (await client.readContract({ address, abi: [fn], functionName: fn.name, args: callArgs })) as T;
          } catch {
            return null;
          }
        };
        const supports = (id: string) => tryCall<boolean>('function supportsInterface(bytes4) view returns (bool)', [id]);
        // Independent calls: the transport batches them into one JSON-RPC request.
        const [implementation, admin, beacon, erc165, erc721, erc1155, symbol, decimals, totalSupply, owner] = await rpc(network, () =>
          Promise.all([
            slotAddress(SLOTS.implementation),
            slotAddress(SLOTS.admin),
            slotAddress(SLOTS.beacon),
            supports(INTERFACES.erc165),
            supports(INTERFACES.erc721),
            supports(INTERFACES.erc1155),
            tryCall<string>('function symbol() view returns (string)'),
            tryCall<number>('function decimals() view returns (uint8)'),
            tryCall<bigint>('function totalSupply() view returns (uint256)'),
            tryCall<Address>('function owner() view returns (address)'),
          ]),
        );
        const isErc20 = symbol !== null && decimals !== null && totalSupply !== null && erc721 !== true;
        return {
          data: {
            chain: network,
            address,
            label: labels.get(address) ?? null,
            bytecode_bytes: (code.length - 2) / 2,
            proxy: implementation || beacon ? { standard: 'EIP-1967', implementation, admin, beacon } : null,
            erc165: erc165 === true,
            standards: { erc20: isErc20, erc721: erc721 === true, erc1155: erc1155 === true },
            token: isErc20 ? { symbol, decimals, total_supply: totalSupply!.toString() } : null,
            owner: owner ? getAddress(owner) : null,
            owner_label: owner ? (labels.get(owner)?.label ?? null) : null,
          },
          source: `rpc:${network}`,
          data_as_of: null,
        };
      },
    }),
  ];
}
