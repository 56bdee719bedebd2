// What the whale-intelligence tools see of watchlists: the WatchStore interface and its limits.
// Outcomes a user causes (already watched, over the cap, unknown address) are values.

/** How many addresses one account may watch, over all chains: bounds each activity scan. */
export const MAX_WATCHES_PER_ACCOUNT = 50;

export interface Watch {
  id: number;
  chain: string;
  /** EVM: lower-case hex (callers checksum it for display). */
  address: string;
  note: string | null;
  created_at: string;
  last_checked_at: string | null;
  /** The last block get_watch_activity covered (at creation: the chain's head then). */
  last_checked_block: number | null;
}

export type WatchAddOutcome =
  | { ok: true; created: boolean; watch: Watch }
  | { ok: false; code: 'LIMIT_REACHED'; limit: number };

/** Where a watch's mark moves, if it is still at `expected` (an older call may have moved it). */
export interface WatchMark {
  id: number;
  expected: number | null;
  to: number;
}

export interface WatchStore {
  /** Adds a watch, or returns the existing one (its note replaced when a note is given). */
  add(accountId: string, w: { chain: string; address: string; note: string | undefined; block: number }): Promise<WatchAddOutcome>;
  list(accountId: string, chain?: string): Promise<Watch[]>;
  /** False when the account does not watch that address on that chain. */
  remove(accountId: string, chain: string, address: string): Promise<boolean>;
  /** Moves the marks in one statement; returns how many moved. */
  advance(accountId: string, marks: WatchMark[]): Promise<number>;
}
