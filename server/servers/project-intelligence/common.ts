// What the project-intelligence tools share: finding a project or chain by what the user typed.
import { distance } from 'fastest-levenshtein';
import { ApiError } from '../../errors.ts';
import type { AssetEntry, AssetRegistry } from '../../providers/market/types.ts';
import { slugOf, type Protocol } from '../../providers/projects/types.ts';
import type { TokenRegistry } from '../../providers/tokens.ts';
import type { z } from 'zod';
import type { familyShape } from './outputs.ts';

/** Chain names differ between DefiLlama's lists ("BSC" now, "Binance" in 2023) and our API. */
const CHAIN_ALIASES: Record<string, string> = {
  binance: 'bsc',
  'bnb chain': 'bsc',
  bnb: 'bsc',
  'op mainnet': 'optimism',
  xdai: 'gnosis',
  avax: 'avalanche',
  matic: 'polygon',
  'zksync era': 'zksync era',
};

export function canonicalChain(name: string): string {
  const n = name.trim().toLowerCase();
  return CHAIN_ALIASES[n] ?? n;
}

export function sameChain(a: string, b: string): boolean {
  return canonicalChain(a) === canonicalChain(b);
}

/**
 * Everyday names DefiLlama lists under another name: MakerDAO's CDP protocol is listed as Sky
 * (Sky Lending) since its 2024 rebrand.
 */
const RENAMED: Record<string, string> = { maker: 'sky', makerdao: 'sky', 'maker dao': 'sky', mkr: 'sky' };

/**
 * Names a user types for one protocol DefiLlama lists under another: a rebrand, or the project's
 * token ticker. Each says why, in the answer's resolved_from.rule.
 */
const ALSO_KNOWN_AS: Record<string, { name: string; why: string }> = {
  eigenlayer: { name: 'EigenCloud', why: 'EigenLayer renamed itself EigenCloud in 2025' },
  eigen: { name: 'EigenCloud', why: 'EIGEN is the token of EigenLayer, now EigenCloud' },
  solend: { name: 'Save', why: 'Solend renamed itself Save in 2024' },
  ldo: { name: 'Lido', why: 'LDO is the token of Lido' },
};

/**
 * The token of a project asked for by its former name, which its token still bears ("maker": the
 * Maker token, MKR, of what DefiLlama lists as Sky): a priced registry asset of that name.
 */
export function formerNameToken(registry: AssetRegistry, query: string): LinkedToken | undefined {
  const q = query.trim().toLowerCase();
  if (!RENAMED[q]) return undefined;
  const asset = registry.resolve(q).find((e) => e.has_prices && (e.name.toLowerCase() === q || e.symbol.toLowerCase() === q));
  return asset ? { asset, linked_by: 'name_only' } : undefined;
}

export type ProjectFamily = z.infer<typeof familyShape>;

/**
 * The protocol a user means: an exact name or slug; else the family the name stands for ("aave":
 * Aave V3, Aave V2, Aave Horizon RWA, ...; "maker": Sky), answered by its largest member by TVL
 * with the others listed; else NOT_FOUND with close matches.
 */
export function resolveProject(protocols: readonly Protocol[], query: string): { protocol: Protocol; family?: ProjectFamily } {
  const q = query.trim().toLowerCase();
  const hit = protocols.find((p) => p.name.toLowerCase() === q) ?? protocols.find((p) => p.slug === slugOf(q));
  if (hit) return { protocol: hit };
  const aka = ALSO_KNOWN_AS[q];
  const renamed = aka ? protocols.find((p) => p.name === aka.name) : undefined;
  if (aka && renamed) {
    const member = { name: renamed.name, slug: renamed.slug, category: renamed.category, tvl_usd: renamed.tvl_usd };
    return { protocol: renamed, family: { query, members: [member], chosen: renamed.name, rule: `${aka.why}: DefiLlama lists it as ${renamed.name}` } };
  }
  const stem = RENAMED[q] ?? q;
  const members = protocols
    .filter((p) => p.name.toLowerCase().startsWith(`${stem} `))
    .sort((a, b) => (b.tvl_usd ?? 0) - (a.tvl_usd ?? 0) || (a.name < b.name ? -1 : 1));
  if (members.length > 0) {
    const chosen = members[0]!;
    return {
      protocol: chosen,
      family: {
        query,
        members: members.map((m) => ({ name: m.name, slug: m.slug, category: m.category, tvl_usd: m.tvl_usd })),
        chosen: chosen.name,
        rule: `"${query}" names no single listed protocol${RENAMED[q] ? ` (DefiLlama lists it as ${stem[0]!.toUpperCase()}${stem.slice(1)})` : ''}: the answer is for the family member with the largest TVL; ask for another member by name`,
      },
    };
  }
  const close = protocols
    .map((p) => ({ p, d: p.name.toLowerCase().includes(q) ? 0 : Math.min(distance(q, p.name.toLowerCase()), distance(q, baseName(p).toLowerCase())) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(q.length / 3)))
    .sort((a, b) => a.d - b.d || (b.p.tvl_usd ?? 0) - (a.p.tvl_usd ?? 0))
    .slice(0, 5)
    .map((x) => ({ name: x.p.name, category: x.p.category, tvl_usd: x.p.tvl_usd }));
  throw new ApiError('NOT_FOUND', `No DeFi project matches "${query}".`, { project: query, close_matches: close });
}

export function findProject(protocols: readonly Protocol[], query: string): Protocol {
  return resolveProject(protocols, query).protocol;
}

/** The chain of a list by canonical name, or NOT_FOUND with close matches. */
export function findChain(names: readonly string[], query: string): string {
  const hit = names.find((n) => sameChain(n, query));
  if (hit) return hit;
  const q = query.trim().toLowerCase();
  const close = names.filter((n) => distance(q, n.toLowerCase()) <= Math.max(1, Math.floor(q.length / 3)) || n.toLowerCase().includes(q)).slice(0, 5);
  throw new ApiError('NOT_FOUND', `No chain matches "${query}".`, { chain: query, close_matches: close });
}

/** How a project's token was linked, strongest first (shown with the token in answers). */
export type TokenLink =
  /** DefiLlama names the token's CoinGecko id (the live API). */
  | 'defillama_gecko_id'
  /** The market registry's name for the asset is the project's, and an explorer token label ties a contract of that asset to a website on the project's own site. */
  | 'name_and_website'
  /** Only the market registry's name matches: no explorer label corroborates it. */
  | 'name_only';

export interface LinkedToken {
  asset: AssetEntry;
  linked_by: TokenLink;
}

/** A URL's site: its host without "www." and below the last two labels ("stake.lido.fi" → "lido.fi"). */
export function siteOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).hostname.toLowerCase().split('.').slice(-2).join('.');
  } catch {
    return null;
  }
}

/**
 * The project's token when it can be told: the live API's CoinGecko id, else a registry asset whose
 * name is the project's name without a version or product suffix ("Aave V3" → Aave), alone or with
 * DAO / Token / Protocol after it ("Lido" → Lido DAO), corroborated when an explorer token label
 * (`tokens`) puts a contract of that asset on the project's own site (LDO's label says
 * stake.lido.fi, Lido's listing lido.fi). Only priced assets count.
 */
export function linkedProjectToken(registry: AssetRegistry, tokens: TokenRegistry, p: Protocol): LinkedToken | undefined {
  const asset = projectToken(registry, p);
  if (!asset) return undefined;
  if (p.gecko_id && asset.id === p.gecko_id) return { asset, linked_by: 'defillama_gecko_id' };
  const site = siteOf(p.url);
  const corroborated = site !== null && tokens.search(asset.symbol).some((t) => t.asset_id === asset.id && siteOf(t.website) === site);
  return { asset, linked_by: corroborated ? 'name_and_website' : 'name_only' };
}

/** The project's token asset (see linkedProjectToken for how the link is made and shown). */
export function projectToken(registry: AssetRegistry, p: Protocol): AssetEntry | undefined {
  if (p.gecko_id) {
    const e = registry.get(p.gecko_id);
    if (e?.has_prices) return e;
  }
  // The registry's name for a governance token is the project's name, or it plus DAO / Token /
  // Protocol ("Lido DAO" for Lido, "Curve DAO Token" for Curve DEX).
  const names = [...new Set([p.name.replace(/\s+v\d+(\.\d+)?$/i, '').trim(), baseName(p)])].flatMap((b) =>
    ['', ' DAO', ' DAO Token', ' Token', ' Protocol'].map((suffix) => `${b}${suffix}`.toLowerCase()),
  );
  for (const name of names) {
    const e = registry.resolve(name).find((x) => x.has_prices && x.name.toLowerCase() === name);
    if (e) return e;
  }
  return undefined;
}

/** The project's name as people write it in posts: its name without version or product suffix. */
export function baseName(p: Protocol): string {
  return p.name.replace(/\s+v\d+(\.\d+)?$/i, '').replace(/\s+(lend|lending|liquid staking|protocol|finance|markets?|dex|perps)$/i, '').trim();
}
