// read_contract and get_contract_info: view calls, and what a contract is (proxy, standards, owner).
import { encodeAbiParameters, getAddress, parseAbiItem, type AbiFunction, type Address } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { addressSchema, causedBy, chainSchema, evmNetwork, rpc } from '../common/evm.ts';
import { eip1967Proxy, tryCall } from '../common/onchain.ts';
import { addressLabel, evmChain, proxyInfo } from '../common/outputs.ts';
import type { ServerDeps } from '../deps.ts';

const INTERFACES = { erc165: '0x01ffc9a7', erc721: '0x80ac58cd', erc1155: '0xd9b67a26' } as const;

const toJson = (v: unknown): unknown =>
  typeof v === 'bigint' ? v.toString() : Array.isArray(v) ? v.map(toJson) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)])) : v;

export function contractTools({ evm, labels }: ServerDeps): ToolDefinition[] {
  return [
    defineTool({
      name: 'read_contract',
      title: 'Read a contract',
      description: 'Returns the result of a view call (eth_call) of a contract function given by its signature; integers as decimal strings.',
      input: z
        .object({
          chain: chainSchema,
          address: addressSchema,
          signature: z.string().trim().min(10).max(500).describe('Human-readable ABI: "function name(type,...) view returns (type,...)".'),
          args: z.array(z.union([z.string().max(1000), z.number(), z.boolean()])).max(20).describe("The function's arguments in order, as many as its signature takes ([] for none)."),
          block: z.number().int().min(0).optional().describe('Read at this block (default: latest).'),
        })
        .strict(),
      output: z.object({ chain: evmChain, address: z.string(), function: z.string(), outputs: z.array(z.string()).describe('ABI types'), result: z.unknown() }),
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
        // Each argument is checked against its ABI type here: a bad one is the caller's mistake (400
        // naming args.i), not the node's.
        const callArgs = fn.inputs.map((input, i) => {
          const v = args.args[i]!;
          try {
            const value = /^u?int\d*$/.test(input.type) ? BigInt(v as string | number) : v;
            encodeAbiParameters([input], [value]);
            return value;
          } catch {
            throw new ApiError('INVALID_PARAMS', `Argument ${i} (${input.name || input.type}) is not a valid ${input.type}: ${JSON.stringify(v)}.`, {
              issues: [{ path: `args.${i}`, message: `expected ${input.type}` }],
            });
          }
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
            if (causedBy(err, 'TimeoutError') || causedBy(err, 'HttpRequestError')) throw err;
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
      title: 'Contract info',
      description: 'Returns what a contract is: bytecode size, EIP-1967 proxy, ERC-165, whether it is ERC-20/721/1155, and its owner.',
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      output: z.object({
        chain: evmChain,
        address: z.string(),
        label: addressLabel.nullable(),
        bytecode_bytes: z.number(),
        proxy: proxyInfo.nullable(),
        erc165: z.boolean(),
        standards: z.object({ erc20: z.boolean(), erc721: z.boolean(), erc1155: z.boolean() }),
        token: z.object({ symbol: z.string().nullable(), decimals: z.number().nullable(), total_supply: z.string() }).nullable(),
        owner: z.string().nullable(),
        owner_label: z.string().nullable(),
      }),
      credits: 2,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_contract_info');
        const client = evm.client(network);
        const address = getAddress(args.address);
        const code = await rpc(network, () => client.getCode({ address }));
        if (!code || code === '0x') throw new ApiError('NOT_FOUND', 'No contract at this address (it is an account or empty).', { address, chain: network });
        const tryView = <T>(signature: string, callArgs: unknown[] = []) => tryCall<T>(client, address, signature, callArgs);
        const supports = (id: string) => tryView<boolean>('function supportsInterface(bytes4) view returns (bool)', [id]);
        // Independent calls: the transport batches them into one JSON-RPC request.
        const [proxy, erc165, erc721, erc1155, symbol, decimals, totalSupply, owner] = await rpc(network, () =>
          Promise.all([
            eip1967Proxy(client, address),
            supports(INTERFACES.erc165),
            supports(INTERFACES.erc721),
            supports(INTERFACES.erc1155),
            tryView<string>('function symbol() view returns (string)'),
            tryView<number>('function decimals() view returns (uint8)'),
            tryView<bigint>('function totalSupply() view returns (uint256)'),
            tryView<Address>('function owner() view returns (address)'),
          ]),
        );
        const isErc20 = symbol !== null && decimals !== null && totalSupply !== null && erc721 !== true;
        return {
          data: {
            chain: network,
            address,
            label: labels.get(address) ?? null,
            bytecode_bytes: (code.length - 2) / 2,
            proxy,
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
