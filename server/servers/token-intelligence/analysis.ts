// Pure analysis behind the token tools: privileged functions found in bytecode, holder
// concentration, and the risk score that adds them up item by item.
import { toFunctionSelector, type Address, type Hex } from 'viem';

export type Severity = 'info' | 'medium' | 'high';

interface CatalogEntry {
  id: string;
  severity: Severity;
  title: string;
  signatures: string[];
}

/** Privileges a token contract can grant its owner or roles, by the functions that exercise them. */
const CATALOG: CatalogEntry[] = [
  { id: 'mint', severity: 'high', title: 'New tokens can be minted', signatures: ['mint(address,uint256)', 'mint(uint256)', 'mintTo(address,uint256)', 'issue(uint256)'] },
  { id: 'blacklist', severity: 'high', title: 'Addresses can be blocked from transferring', signatures: ['blacklist(address)', 'addBlackList(address)', 'addToBlacklist(address)', 'setBlacklist(address,bool)', 'blockAccount(address)', 'freeze(address)'] },
  { id: 'pause', severity: 'medium', title: 'All transfers can be paused', signatures: ['pause()', 'unpause()'] },
  { id: 'fees', severity: 'medium', title: 'Transfer fees can be changed', signatures: ['setFee(uint256)', 'setTaxFee(uint256)', 'setFees(uint256,uint256)', 'setTransferFee(uint256)'] },
  { id: 'upgrade', severity: 'high', title: 'The code can be upgraded in place (UUPS)', signatures: ['upgradeTo(address)', 'upgradeToAndCall(address,bytes)'] },
  { id: 'ownership', severity: 'info', title: 'The contract has an owner', signatures: ['owner()', 'transferOwnership(address)', 'renounceOwnership()'] },
  { id: 'roles', severity: 'info', title: 'Role-based access control', signatures: ['grantRole(bytes32,address)', 'revokeRole(bytes32,address)'] },
];
const SELECTORS = CATALOG.map((c) => ({ ...c, selectors: c.signatures.map((s) => ({ signature: s, selector: toFunctionSelector(s) })) }));

/**
 * The 4-byte constants a contract's dispatcher compares call data against: PUSH4 operands (and
 * PUSH3 ones, which is how solc pushes a selector whose first byte is zero). Walks opcodes so push
 * data is never read as code.
 */
export function pushedSelectors(code: Hex): Set<string> {
  const bytes = Buffer.from(code.slice(2), 'hex');
  const out = new Set<string>();
  for (let i = 0; i < bytes.length; i++) {
    const op = bytes[i]!;
    if (op >= 0x60 && op <= 0x7f) {
      const n = op - 0x5f;
      if (n === 4 || n === 3) out.add(`0x${bytes.subarray(i + 1, i + 1 + n).toString('hex').padStart(8, '0')}`);
      i += n;
    }
  }
  return out;
}

export interface Finding {
  id: string;
  severity: Severity;
  title: string;
  evidence: { function: string; selector: string; where: 'contract' | 'implementation'; address?: Address }[];
}

export function findPrivileges(codes: { where: 'contract' | 'implementation'; code: Hex; address?: Address }[]): Finding[] {
  const scanned = codes.map((c) => ({ ...c, selectors: pushedSelectors(c.code) }));
  const findings: Finding[] = [];
  for (const entry of SELECTORS) {
    const evidence: Finding['evidence'] = [];
    for (const c of scanned) {
      for (const s of entry.selectors) {
        if (c.selectors.has(s.selector)) evidence.push({ function: s.signature, selector: s.selector, where: c.where, ...(c.address ? { address: c.address } : {}) });
      }
    }
    if (evidence.length > 0) findings.push({ id: entry.id, severity: entry.severity, title: entry.title, evidence });
  }
  return findings;
}

export interface HolderConcentration {
  /** Share of the total supply held by the ten largest counted holders (0..1). */
  top10_share: number;
  /** Herfindahl-Hirschman index over shares of supply, 0..10,000 (10,000: one holder has it all). */
  hhi: number;
  /** Gini coefficient over the counted holders' balances (0: equal, toward 1: one holds all). */
  gini: number;
}

/** Balances sorted largest first; total is the token's total supply. */
export function concentration(balances: bigint[], total: bigint): HolderConcentration {
  if (total <= 0n || balances.length === 0) return { top10_share: 0, hhi: 0, gini: 0 };
  const share = (b: bigint) => Number((b * 10n ** 12n) / total) / 1e12;
  const shares = balances.map(share);
  const top10 = shares.slice(0, 10).reduce((a, b) => a + b, 0);
  const hhi = shares.reduce((a, s) => a + (s * 100) ** 2, 0);
  // Gini = Σ_i Σ_j |x_i - x_j| / (2 n² mean), computed on sorted values in O(n).
  const asc = [...shares].sort((a, b) => a - b);
  const n = asc.length;
  const sum = asc.reduce((a, b) => a + b, 0);
  const weighted = asc.reduce((a, x, i) => a + (2 * (i + 1) - n - 1) * x, 0);
  const gini = n < 2 || sum === 0 ? 0 : weighted / (n * sum);
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  return { top10_share: round(top10, 6), hhi: round(hhi, 2), gini: round(gini, 6) };
}

export interface RiskInput {
  findings: Finding[];
  proxy: boolean;
  owner: 'active' | 'renounced' | 'none';
  listed: boolean;
  concentration: { top10_share: number; from_block: number; to_block: number } | null;
}

export interface RiskItem {
  factor: string;
  points: number;
  evidence: string;
}

export interface RiskResult {
  score: number;
  level: 'low' | 'medium' | 'high' | 'critical';
  items: RiskItem[];
  not_assessed: string[];
}

/**
 * Adds up points per risk factor (capped at 100). The weights are ours, documented here and in
 * each item: privileges that let one party take value (mint, blacklist, upgrade) weigh most.
 */
export function riskScore(input: RiskInput): RiskResult {
  const items: RiskItem[] = [];
  const notAssessed: string[] = [];
  const has = (id: string) => input.findings.find((f) => f.id === id);
  const fns = (id: string) => has(id)!.evidence.map((e) => e.function).join(', ');
  const controlled = input.owner === 'active' || Boolean(has('roles'));
  if (has('mint')) {
    items.push(
      controlled
        ? { factor: 'mint', points: 25, evidence: `mint functions (${fns('mint')}) with an active owner or roles` }
        : { factor: 'mint', points: 5, evidence: `mint functions (${fns('mint')}) but no active owner or roles` },
    );
  }
  if (has('blacklist')) items.push({ factor: 'blacklist', points: 20, evidence: `blocking functions (${fns('blacklist')})` });
  if (has('pause')) items.push({ factor: 'pause', points: 15, evidence: `pause functions (${fns('pause')})` });
  if (has('fees')) items.push({ factor: 'fees', points: 10, evidence: `fee setters (${fns('fees')})` });
  if (input.proxy || has('upgrade')) items.push({ factor: 'upgradeable', points: 20, evidence: input.proxy ? 'EIP-1967 proxy: the implementation can be replaced' : `upgrade functions (${fns('upgrade')})` });
  if (input.owner === 'active') items.push({ factor: 'owner', points: 5, evidence: 'owner() names an active owner' });
  if (!input.listed) items.push({ factor: 'unlisted', points: 10, evidence: 'not on a curated token list (Uniswap default list)' });
  if (input.concentration === null) notAssessed.push('holder concentration (no transfers in the last blocks scanned)');
  else {
    const s = input.concentration.top10_share;
    const where = `top-10 holders hold ${(s * 100).toFixed(2)}% of supply (holders seen in blocks ${input.concentration.from_block}..${input.concentration.to_block})`;
    if (s >= 0.9) items.push({ factor: 'concentration', points: 15, evidence: where });
    else if (s >= 0.5) items.push({ factor: 'concentration', points: 8, evidence: where });
  }
  const score = Math.min(100, items.reduce((a, i) => a + i.points, 0));
  const level = score < 20 ? 'low' : score < 45 ? 'medium' : score < 70 ? 'high' : 'critical';
  return { score, level, items, not_assessed: notAssessed };
}
