// Terms for trending topics: words of three or more letters a post contains, counted once per
// post, leaving out common English words, URL fragments and the names of assets (assets trend
// on their own list). Over posts' texts only, so the compute pool can count them on a thread.

const STOPWORDS = new Set(
  (
    'the and for that this with you your are was were have has had not but all can will just what about from they them their there ' +
    'which when who how why would could should than then more most some any its it\'s i\'m don\'t dont into out our one get got like ' +
    'also been being did does doing here his her him she he over only other such very much many even still now new may might ' +
    'because while where after before again same own too off each few both being those these thing things really think know want ' +
    'going make made need see way well back time people good right year years day days lot im ive youre thats isnt doesnt didnt ' +
    'https http www com amp t.co reddit removed deleted post posts comment comments let say said use used using via yes yeah'
  ).split(/\s+/),
);

export function textTerms(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[a-z][a-z0-9']{2,}/g)) {
    const w = m[0].replace(/'s$/, '');
    if (w.length >= 3 && !STOPWORDS.has(w)) out.add(w);
  }
  return out;
}

/** How many of the texts contain each term. */
export function termCounts(texts: readonly string[], exclude: ReadonlySet<string> = ASSET_WORDS): Map<string, number> {
  const m = new Map<string, number>();
  for (const text of texts) for (const t of textTerms(text)) if (!exclude.has(t)) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

// The most common asset words in the data; assets are ranked on their own list.
const ASSET_WORDS: ReadonlySet<string> = new Set(['bitcoin', 'bitcoins', 'btc', 'ethereum', 'eth', 'solana', 'sol', 'crypto', 'xrp', 'ripple']);
