// Which assets a post talks about: cashtags, tickers, names and contract addresses, matched
// against the assets that have prices in the snapshot (the ones every tool can then resolve).
//
// Ambiguity rules (tested in test/analytics/mentions.test.ts):
// 1. A cashtag ("$SOL", "$sol") always counts: writing "$" is an explicit reference.
// 2. A bare ticker counts only in capitals ("SOL", "ETH") and with at least 3 letters, unless it is
//    an English word people also shout ("ONE", "TIME", "NEAR", "FLOW", ...: TICKER_WORDS). Two-letter
//    tickers ("OP", "AR") count only as cashtags.
// 3. In lower case only well-known tickers that are not words count ("btc", "eth": LOWERCASE_TICKERS),
//    so "sol" (Spanish for sun, a music note) does not mean Solana but "SOL" and "$sol" do; nor do
//    "etc" (et cetera), "uni", "atom" or "ada" in lower case.
// 4. Names and ids count in any case as whole words ("bitcoin", "Chainlink"), longest first, so
//    "Bitcoin Cash" is Bitcoin Cash and not also Bitcoin; a plural "s" is allowed ("bitcoins").
//    Names that are everyday words ("Compound", "Maker", "Flow", "Magic": NAME_WORDS) never count as
//    names; their tickers still do under rules 1-2.
// 5. Contract addresses count when they are a known contract of the asset (EVM addresses compared
//    case-insensitively, Solana mints exactly).
// 6. A ticker shared by several priced assets goes to the first in the registry's order (priced
//    first, then market-cap rank): "$ETH" is Ethereum.

/** What mention matching reads of an asset (the market registry's AssetEntry has these fields). */
export interface MentionableAsset {
  id: string;
  symbol: string;
  name: string;
  aliases: readonly string[];
  platforms: readonly { chain: string; address: string }[];
}

export const TICKER_WORDS: ReadonlySet<string> = new Set([
  'ONE', 'TIME', 'SUN', 'FUN', 'HOT', 'LIT', 'SAND', 'ROSE', 'WOO', 'NEAR', 'FLOW', 'MAGIC', 'CAKE', 'DENT',
  'ARK', 'AMP', 'ELON', 'GALA', 'REQ', 'WING', 'OMI', 'COMP', 'MANA', 'SPELL', 'UMA', 'TEL', 'POWR', 'ALPHA',
  'DIA', 'FUN', 'HOT', 'KAVA', 'BAT', 'BAND', 'LINK', 'DOT', 'REN', 'SUSHI', 'ENS', 'RUNE', 'MINA',
  'ICX', 'GNO', 'BEL', 'ANKR', 'RLY', 'CEL', 'MLN', 'NKN', 'CVC', 'STORJ', 'OHM', 'TRB', 'NEXO',
]);
// Note: LINK, DOT and RUNE are tickers of well-known assets but also words written in capitals
// in titles ("DOT COM", "RUNE"); they still count as cashtags and names.

export const LOWERCASE_TICKERS: ReadonlySet<string> = new Set([
  'btc', 'eth', 'xrp', 'ltc', 'xmr', 'bch', 'bsv', 'doge', 'usdt', 'usdc', 'bnb', 'avax', 'matic', 'xlm', 'trx',
  'shib', 'zec', 'hbar', 'xtz', 'aave', 'busd', 'steth', 'wbtc',
]);

export const NAME_WORDS: ReadonlySet<string> = new Set([
  'amp', 'magic', 'flow', 'maker', 'compound', 'dent', 'gate', 'holo', 'rally', 'secret', 'sushi', 'time',
  'stella', 'harmony', 'request', 'quant', 'civic', 'ark', 'icon', 'helium', 'metal', 'kava', 'stacks',
  'cream', 'wing', 'cosmos', 'graph', 'leo', 'celo', 'neo', 'tron', 'dash', 'stratis', 'bella', 'dodo',
  'secret', 'pepe', 'bonk', 'sun', 'waves', 'theta', 'origin', 'render', 'band', 'spell', 'magic',
  'curve', 'polygon', 'stellar', 'ecash', 'ankr', 'wax', 'cartesi', 'livepeer', 'injective', 'tellor',
  'fei', 'ftx', 'nexo', 'velas', 'telcoin', 'chiliz', 'uma',
  // Ids and aliases that are words: "link" is FINSCHIA's id, "near" NEAR Protocol's, "sonic" Fantom's.
  'link', 'near', 'storm', 'swipe', 'melon', 'wonderland', 'sonic', 'metal',
]);

/** A match of an asset in a text, and how it was recognised. */
export interface Mention {
  asset_id: string;
  via: 'cashtag' | 'ticker' | 'name' | 'contract';
  text: string;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}.'-]*/gu;

export class MentionExtractor {
  readonly #bySymbol = new Map<string, string>();
  readonly #byPhrase = new Map<string, string>();
  readonly #byContract = new Map<string, string>();
  readonly #longestPhrase: number;

  /** `assets` in the registry's order (priced first, by market-cap rank): the first of a ticker wins. */
  constructor(assets: readonly MentionableAsset[]) {
    let longest = 1;
    for (const a of assets) {
      const sym = a.symbol.toLowerCase();
      if (!this.#bySymbol.has(sym)) this.#bySymbol.set(sym, a.id);
      for (const phrase of [a.name, a.id.includes('-') ? '' : a.id, ...a.aliases]) {
        const key = phrase.toLowerCase().trim();
        if (key.length < 4 || NAME_WORDS.has(key) || key === sym) continue;
        if (!this.#byPhrase.has(key)) this.#byPhrase.set(key, a.id);
        longest = Math.max(longest, key.split(/\s+/).length);
      }
      for (const p of a.platforms) {
        const addr = p.address.startsWith('0x') ? p.address.toLowerCase() : p.address;
        if (!this.#byContract.has(addr)) this.#byContract.set(addr, a.id);
      }
    }
    this.#longestPhrase = longest;
  }

  /** Every mention in order of appearance (an asset may appear several times). */
  mentions(text: string): Mention[] {
    const out: Mention[] = [];
    for (const m of text.matchAll(/\$([A-Za-z][A-Za-z0-9]{0,9})\b/g)) {
      const id = this.#bySymbol.get(m[1]!.toLowerCase());
      if (id) out.push({ asset_id: id, via: 'cashtag', text: m[0] });
    }
    for (const m of text.matchAll(/\b0x[0-9a-fA-F]{40}\b|\b[1-9A-HJ-NP-Za-km-z]{32,44}\b/g)) {
      const raw = m[0];
      const id = this.#byContract.get(raw.startsWith('0x') ? raw.toLowerCase() : raw);
      if (id) out.push({ asset_id: id, via: 'contract', text: raw });
    }
    // Words not preceded by "$" (those were cashtags), with trailing punctuation trimmed.
    const words: { text: string; cashtag: boolean }[] = [];
    for (const m of text.matchAll(WORD)) {
      const w = m[0].replace(/[.'-]+$/, '');
      words.push({ text: w, cashtag: m.index > 0 && text[m.index - 1] === '$' });
    }
    for (let i = 0; i < words.length; i++) {
      let matched = 0;
      for (let n = Math.min(this.#longestPhrase, words.length - i); n >= 1 && matched === 0; n--) {
        const slice = words.slice(i, i + n);
        if (slice[0]!.cashtag) break;
        const phrase = slice.map((w) => w.text.toLowerCase()).join(' ');
        const id = this.#byPhrase.get(phrase) ?? (phrase.endsWith('s') ? this.#byPhrase.get(phrase.slice(0, -1)) : undefined);
        if (id) {
          out.push({ asset_id: id, via: 'name', text: slice.map((w) => w.text).join(' ') });
          matched = n;
        }
      }
      if (matched > 0) {
        i += matched - 1;
        continue;
      }
      const w = words[i]!;
      if (w.cashtag) continue;
      const upper = w.text.length >= 3 && w.text === w.text.toUpperCase() && /^[A-Z0-9]+$/.test(w.text) && /[A-Z]/.test(w.text) && !TICKER_WORDS.has(w.text);
      const lower = LOWERCASE_TICKERS.has(w.text.toLowerCase());
      if (upper || lower) {
        const id = this.#bySymbol.get(w.text.toLowerCase());
        if (id) out.push({ asset_id: id, via: 'ticker', text: w.text });
      }
    }
    return out;
  }

  /** The distinct assets a text mentions, in order of first appearance. */
  assets(text: string): string[] {
    return [...new Set(this.mentions(text).map((m) => m.asset_id))];
  }
}
