// Token tools: the registry (search, profile) and what the contract itself shows (holders, privileges, risk).
import { formatUnits, getAddress, type Address, type PublicClient } from 'viem';
import { z } from 'zod';
import { ApiError } from '../../errors.ts';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import type { EvmNetwork } from '../../providers/evm/types.ts';
import type { TokenEntry } from '../../providers/tokens.ts';
import { addressSchema, chainSchema, evmNetwork, rpc } from '../common/evm.ts';
import { eip1967Proxy, erc20Metadata, resolveBlockRange, transferLogs, tryCall, MAX_BLOCK_RANGE, type ProxyInfo } from '../common/onchain.ts';
import { concentration, findPrivileges, riskScore, type HolderConcentration } from './analysis.ts';
import { addressLabel, evmChain, proxyInfo, volumeSourceField } from '../common/outputs.ts';
import { quoteVolume } from '../common/volume.ts';
import type { ServerDeps } from '../deps.ts';

const findingSchema = z.object({
  id: z.string(),
  severity: z.enum(['info', 'medium', 'high']),
  title: z.string(),
  evidence: z.array(z.object({ function: z.string(), selector: z.string(), where: z.enum(['contract', 'implementation']), address: z.string().optional() })),
});

const searchNetworkSchema = z.enum(['ethereum', 'base', 'polygon', 'bsc', 'solana']).optional().describe('Only this chain (default: all).');

export function tokenTools(deps: ServerDeps): ToolDefinition[] {
  const { evm, labels, tokens, market, chainCache } = deps;
  const registryView = (t: TokenEntry | undefined) =>
    t ? { symbol: t.symbol || null, name: t.name || null, decimals: t.decimals, listed: t.listed, tags: t.tags, website: t.website, asset_id: t.asset_id, sources: t.sources } : null;

  /** The contract's code, or NOT_FOUND when nothing is deployed there. */
  const requireContract = async (client: PublicClient, network: EvmNetwork, address: Address) => {
    const code = await rpc(network, () => client.getCode({ address }));
    if (!code || code === '0x') throw new ApiError('NOT_FOUND', 'No contract at this address (it is an account or empty).', { address, chain: network });
    return code;
  };

  /** Holders seen in Transfer logs over the range, with their balances read at its end. */
  const holders = async (network: EvmNetwork, token: Address, range: { from_block?: number; to_block?: number }) => {
    const client = evm.client(network);
    return rpc(network, async () => {
      const r = await resolveBlockRange(client, range);
      const [logs, meta] = await Promise.all([transferLogs(client, { token, from: r.from, to: r.to }), erc20Metadata(client, token, { cache: chainCache, network })]);
      if (meta.total_supply === null || meta.decimals === null) {
        throw new ApiError('INVALID_PARAMS', 'This contract does not answer as an ERC-20 token (no totalSupply or decimals).', { issues: [{ path: 'token', message: 'not an ERC-20 token' }] });
      }
      const seen = new Set<Address>();
      for (const l of logs) {
        seen.add(l.from);
        seen.add(l.to);
      }
      seen.delete('0x0000000000000000000000000000000000000000');
      const addresses = [...seen];
      // Balances at the range's end block, read in one batched round trip.
      const balances = await Promise.all(
        addresses.map((a) => client.readContract({ address: token, abi: BALANCE_OF, functionName: 'balanceOf', args: [a], blockNumber: BigInt(r.to) })),
      );
      const list = addresses.map((a, i) => ({ address: a, balance: balances[i]! })).filter((h) => h.balance > 0n);
      list.sort((a, b) => (a.balance < b.balance ? 1 : a.balance > b.balance ? -1 : a.address.localeCompare(b.address)));
      return { range: r, transfers: logs.length, meta: { ...meta, total_supply: meta.total_supply, decimals: meta.decimals }, list };
    });
  };

  const security = async (network: EvmNetwork, address: Address) => {
    const client = evm.client(network);
    const code = await requireContract(client, network, address);
    return rpc(network, async () => {
      const [proxy, owner] = await Promise.all([eip1967Proxy(client, address), tryCall<Address>(client, address, 'function owner() view returns (address)')]);
      // Behind a proxy the functions live in the implementation: read its code too.
      const implCode = proxy?.implementation ? await client.getCode({ address: proxy.implementation }) : undefined;
      const findings = findPrivileges([
        { where: 'contract', code },
        ...(proxy?.implementation && implCode ? [{ where: 'implementation' as const, code: implCode, address: proxy.implementation }] : []),
      ]);
      return { code, proxy, owner: owner ? getAddress(owner) : null, findings };
    });
  };

  const ownerView = (owner: Address | null) =>
    owner === null
      ? { address: null, status: 'none' as const, note: 'the contract has no owner() function' }
      : BigInt(owner) === 0n
        ? { address: owner, status: 'renounced' as const, note: 'owner() is the zero address' }
        : { address: owner, status: 'active' as const, label: labels.get(owner) ?? null };

  return [
    defineTool({
      name: 'search_token',
      title: 'Search tokens',
      description: 'Returns token contracts per chain matching a symbol or name, curated (listed) ones first.',
      input: z
        .object({
          query: z.string().trim().min(1).max(100).describe('A symbol ("USDC", "$PEPE") or part of a name.'),
          chain: searchNetworkSchema,
          limit: z.number().int().min(1).max(50).default(20),
        })
        .strict(),
      output: z.object({
        query: z.string(),
        total: z.number(),
        candidates: z.array(
          z.object({
            chain: z.string(),
            address: z.string(),
            symbol: z.string().nullable(),
            name: z.string().nullable(),
            decimals: z.number().nullable(),
            listed: z.boolean(),
            tags: z.array(z.string()),
            asset_id: z.string().nullable(),
          }),
        ),
        note: z.string().optional(),
      }),
      // It answers from the token registry (dated by its lists), not from daily prices.
      freshness: 'registry',
      credits: 0,
      handler: async (args) => {
        const hits = tokens.search(args.query, args.chain);
        return {
          data: {
            query: args.query,
            total: hits.length,
            candidates: hits.slice(0, args.limit).map((t) => ({
              chain: t.network,
              address: t.network === 'solana' ? t.address : getAddress(t.address),
              symbol: t.symbol || null,
              name: t.name || null,
              decimals: t.decimals,
              listed: t.listed,
              tags: t.tags,
              asset_id: t.asset_id,
            })),
            note: hits.length === 0 ? 'No token in the registry matches; get_token_profile reads any contract by address.' : undefined,
          },
          source: 'registry',
          data_as_of: '2025-01-01',
        };
      },
    }),
    defineTool({
      name: 'get_token_profile',
      title: 'Token profile',
      description: "Returns a token's on-chain name, symbol, decimals and total supply, its registry entry, and its USD market data when tied to a priced asset.",
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      output: z.object({
        chain: evmChain,
        address: z.string(),
        is_erc20: z.boolean(),
        on_chain: z.object({
          name: z.string().nullable(),
          symbol: z.string().nullable(),
          decimals: z.number().nullable(),
          total_supply: z.string().nullable().describe('smallest unit'),
          total_supply_units: z.string().nullable(),
        }),
        registry: z
          .object({
            symbol: z.string().nullable(),
            name: z.string().nullable(),
            decimals: z.number().nullable(),
            listed: z.boolean(),
            tags: z.array(z.string()),
            website: z.string().nullable(),
            asset_id: z.string().nullable(),
            sources: z.array(z.string()),
          })
          .nullable(),
        label: addressLabel.nullable(),
        market: z
          .object({
            asset_id: z.string(),
            price_usd: z.number(),
            market_cap_usd: z.number().nullable(),
            volume_24h_usd: z.number().nullable(),
            volume_source: volumeSourceField,
            change_24h_pct: z.number().nullable(),
            as_of: z.string(),
            source: z.string(),
          })
          .nullable(),
      }),
      credits: 1,
      handler: async (args, ctx) => {
        const network = evmNetwork(args.chain, 'get_token_profile');
        const client = evm.client(network);
        const address = getAddress(args.address);
        // The code check and the metadata reads share one batched round trip.
        const [, meta] = await Promise.all([requireContract(client, network, address), rpc(network, () => erc20Metadata(client, address, { cache: chainCache, network }))]);
        const entry = tokens.get(network, address);
        const quote = entry?.asset_id ? ((await market.quotes([entry.asset_id], ctx.signal).catch(() => []))[0] ?? null) : null;
        const decimals = meta.decimals ?? entry?.decimals ?? null;
        return {
          data: {
            chain: network,
            address,
            is_erc20: meta.symbol !== null && meta.decimals !== null && meta.total_supply !== null,
            on_chain: {
              name: meta.name,
              symbol: meta.symbol,
              decimals: meta.decimals,
              total_supply: meta.total_supply?.toString() ?? null,
              total_supply_units: meta.total_supply !== null && decimals !== null ? formatUnits(meta.total_supply, decimals) : null,
            },
            registry: registryView(entry),
            label: labels.get(address, network) ?? null,
            market: quote
              ? { asset_id: quote.asset_id, price_usd: quote.price_usd, market_cap_usd: quote.market_cap_usd, ...quoteVolume(quote), change_24h_pct: quote.change_24h_pct, as_of: quote.as_of, source: quote.source }
              : null,
          },
          source: quote ? `rpc:${network}+registry+${quote.source}` : `rpc:${network}+registry`,
          data_as_of: quote?.as_of ?? null,
        };
      },
    }),
    defineTool({
      name: 'get_holder_analysis',
      title: 'Holder analysis',
      description: `Returns an ERC-20 token's top holders among the addresses in its Transfer logs over at most ${MAX_BLOCK_RANGE} blocks, labelled, with balances at the range's end, top-10 share of supply, HHI and Gini.`,
      input: z
        .object({
          chain: chainSchema,
          token: addressSchema,
          from_block: z.number().int().min(0).optional().describe(`Default: ${MAX_BLOCK_RANGE} blocks before to_block.`),
          to_block: z.number().int().min(0).optional().describe('Default: the latest block.'),
          top: z.number().int().min(1).max(100).default(20).describe('Holders listed (all are counted).'),
        })
        .strict(),
      output: z.object({
        chain: evmChain,
        token: z.string(),
        symbol: z.string().nullable(),
        from_block: z.number(),
        to_block: z.number(),
        transfers_scanned: z.number(),
        holders_counted: z.number(),
        total_supply: z.string().describe('smallest unit'),
        top_holders: z.array(
          z.object({
            address: z.string(),
            balance: z.string().describe('smallest unit'),
            balance_units: z.string(),
            share_of_supply: z.number().nullable().describe('0-1'),
            label: z.string().nullable(),
            kind: z.string().nullable(),
          }),
        ),
        concentration: z
          .object({ top10_share: z.number().nullable(), hhi: z.number().nullable().describe('0-10000'), gini: z.number().nullable() })
          .describe('null with no holder counted: nothing is measured (0 would read as perfectly even).'),
        coverage: z.string(),
      }),
      credits: 3,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_holder_analysis');
        const token = getAddress(args.token);
        await requireContract(evm.client(network), network, token);
        const h = await holders(network, token, args);
        const stats: HolderConcentration = concentration(h.list.map((x) => x.balance), h.meta.total_supply);
        return {
          data: {
            chain: network,
            token,
            symbol: h.meta.symbol,
            from_block: h.range.from,
            to_block: h.range.to,
            transfers_scanned: h.transfers,
            holders_counted: h.list.length,
            total_supply: h.meta.total_supply.toString(),
            top_holders: h.list.slice(0, args.top).map((x) => {
              const label = labels.get(x.address, network);
              return {
                address: x.address,
                balance: x.balance.toString(),
                balance_units: formatUnits(x.balance, h.meta.decimals),
                share_of_supply: h.meta.total_supply > 0n ? Number((x.balance * 1_000_000n) / h.meta.total_supply) / 1_000_000 : null,
                label: label?.label ?? null,
                kind: label?.kind ?? null,
              };
            }),
            concentration: h.list.length > 0 ? stats : { top10_share: null, hhi: null, gini: null },
            coverage: `Holders are the addresses seen in Transfer logs of blocks ${h.range.from}..${h.range.to}; holders who did not move the token in that range are not counted. Shares are of the total supply at block ${h.range.to}.`,
          },
          source: `rpc:${network}`,
          data_as_of: null,
          // No holder in the range: nothing was measured, which is free.
          empty: h.list.length === 0,
        };
      },
    }),
    defineTool({
      name: 'get_token_security',
      title: 'Token security checks',
      description: 'Returns what a token contract lets privileged accounts do (mint, pause, blacklist, fees, upgrade) from its bytecode and its proxy implementation\'s, and its owner, each finding with evidence.',
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      output: z.object({
        chain: evmChain,
        address: z.string(),
        owner: z.object({
          address: z.string().nullable(),
          status: z.enum(['none', 'renounced', 'active']),
          note: z.string().optional(),
          label: addressLabel.nullable().optional(),
        }),
        proxy: proxyInfo.extend({ note: z.string() }).nullable(),
        findings: z.array(findingSchema),
        method: z.string(),
      }),
      credits: 2,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_token_security');
        const address = getAddress(args.address);
        const s = await security(network, address);
        return {
          data: {
            chain: network,
            address,
            owner: ownerView(s.owner),
            proxy: proxyView(s.proxy),
            findings: s.findings,
            method: 'Function selectors pushed by the dispatcher (PUSH4) in the runtime bytecode; a selector shows a function exists, not who may call it.',
          },
          source: `rpc:${network}`,
          data_as_of: null,
        };
      },
    }),
    defineTool({
      name: 'get_risk_score',
      title: 'Token risk score',
      description: "Returns a token's 0-100 risk score itemised: privileged functions, upgradeability, owner, curated listing and holder concentration.",
      input: z.object({ chain: chainSchema, address: addressSchema }).strict(),
      output: z.object({
        chain: evmChain,
        address: z.string(),
        symbol: z.string().nullable(),
        score: z.number(),
        level: z.enum(['low', 'medium', 'high', 'critical']),
        items: z.array(z.object({ factor: z.string(), points: z.number(), evidence: z.string() })),
        not_assessed: z.array(z.string()),
        findings: z.array(findingSchema),
      }),
      credits: 3,
      handler: async (args) => {
        const network = evmNetwork(args.chain, 'get_risk_score');
        const address = getAddress(args.address);
        const s = await security(network, address);
        const h = await holders(network, address, {});
        const stats = concentration(h.list.map((x) => x.balance), h.meta.total_supply);
        const entry = tokens.get(network, address);
        const result = riskScore({
          findings: s.findings,
          proxy: s.proxy !== null,
          owner: ownerView(s.owner).status,
          listed: entry?.listed ?? false,
          concentration: h.list.length > 0 ? { top10_share: stats.top10_share, from_block: h.range.from, to_block: h.range.to } : null,
        });
        return {
          data: { chain: network, address, symbol: h.meta.symbol, ...result, findings: s.findings },
          source: `rpc:${network}+registry`,
          data_as_of: null,
        };
      },
    }),
  ];
}

const BALANCE_OF = [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'a', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] }] as const;

const proxyView = (p: ProxyInfo | null) => (p ? { ...p, note: 'the implementation can be replaced by the proxy admin' } : null);
