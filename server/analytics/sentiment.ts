// Sentiment of a post: VADER (the vader-sentiment package, a port of Hutto & Gilbert's lexicon
// and rules for social-media text) with a crypto lexicon on top. VADER was chosen because it was
// built for short, informal posts (caps, "!!!", emoticons, negation, "but") and is transparent:
// every score traces to lexicon entries. Crypto slang means things VADER's general lexicon does
// not know ("moon", "rekt", "hodl") or gets backwards ("bullish" is absent, "dump" is mild).
import vader from 'vader-sentiment';

/**
 * The crypto lexicon, on VADER's scale (-4 very negative .. +4 very positive). A word here
 * replaces VADER's own valence for that word. Values were set by comparison with VADER's entries
 * of similar strength (e.g. "great" 3.1, "good" 1.9, "bad" -2.5, "terrible" -2.1, "scam" -2.6 in
 * some lexicons), and checked on the hand-labelled set in test/fixtures/sentiment-labelled.json.
 */
export const CRYPTO_LEXICON: Readonly<Record<string, number>> = {
  // Price going up, conviction, optimism.
  moon: 2.5,
  mooning: 2.8,
  moonshot: 2.2,
  bullish: 2.4,
  bull: 1.2,
  bulls: 1.0,
  pump: 1.2,
  pumping: 1.5,
  rally: 1.8,
  rallying: 1.8,
  breakout: 1.6,
  ath: 2.0,
  hodl: 1.5,
  hodling: 1.5,
  lambo: 2.0,
  wagmi: 2.2,
  gains: 1.8,
  adoption: 1.4,
  undervalued: 1.3,
  accumulate: 1.0,
  accumulating: 1.0,
  buying: 0.6,
  long: 0.3,
  green: 0.8,
  // Price going down, losses, fraud and fear.
  bearish: -2.4,
  bear: -1.2,
  bears: -1.0,
  dump: -1.8,
  dumping: -2.0,
  dumped: -1.8,
  crash: -2.6,
  crashing: -2.8,
  crashed: -2.6,
  rekt: -2.8,
  rug: -2.8,
  rugged: -3.0,
  rugpull: -3.2,
  scam: -3.0,
  scammer: -3.0,
  scammers: -3.0,
  ponzi: -3.0,
  fud: -1.5,
  ngmi: -2.2,
  bagholder: -1.8,
  bagholders: -1.8,
  capitulation: -2.2,
  liquidated: -2.4,
  liquidation: -1.8,
  liquidations: -1.8,
  hack: -2.5,
  hacked: -2.8,
  exploit: -2.5,
  exploited: -2.8,
  shitcoin: -2.0,
  shitcoins: -2.0,
  overvalued: -1.3,
  selloff: -2.0,
  red: -0.8,
  bleeding: -2.0,
  plunge: -2.4,
  plunges: -2.4,
  plummet: -2.6,
  plummets: -2.6,
  // Neutral in crypto talk although VADER scores them ("short" squeezes both ways, "fork" is news).
  fork: 0,
  mining: 0,
  miners: 0,
  volatile: -0.3,
  volatility: -0.2,
};

/** VADER's damping of a word's valence after a negation ("not bullish"), as in its own rules. */
const NEGATION_SCALAR = -0.74;
const NEGATIONS = new Set([
  'not', 'no', 'never', 'nothing', 'nobody', 'none', 'neither', 'nor', 'without', 'aint', "ain't", 'isnt', "isn't",
  'dont', "don't", 'doesnt', "doesn't", 'didnt', "didn't", 'wont', "won't", 'cant', "can't", 'cannot', 'wasnt', "wasn't",
  'arent', "aren't", 'shouldnt', "shouldn't", 'wouldnt', "wouldn't", 'couldnt', "couldn't",
]);

interface VaderAnalyzer {
  polarity_scores(text: string): { neg: number; neu: number; pos: number; compound: number };
  sentiment_valence(valence: number, sentiText: { words_and_emoticons: string[] }, item: string, index: number, sentiments: number[]): number[];
}
const analyzer = (vader as { SentimentIntensityAnalyzer: VaderAnalyzer }).SentimentIntensityAnalyzer;

// The JS port keeps its lexicon private and, unlike the Python original (analyzer.lexicon.update),
// offers no way to add words. It does call its word scorer through the class on every word, so the
// crypto lexicon is added by scoring crypto words here (with VADER's negation rule) and handing
// every other word to VADER's own scorer. Done once, at module load.
const vaderValence = analyzer.sentiment_valence.bind(analyzer);
let withCryptoLexicon = true;
analyzer.sentiment_valence = (valence, sentiText, item, index, sentiments) => {
  const lower = item.toLowerCase();
  const crypto = withCryptoLexicon && Object.hasOwn(CRYPTO_LEXICON, lower) ? CRYPTO_LEXICON[lower] : undefined;
  if (crypto === undefined) return vaderValence(valence, sentiText, item, index, sentiments);
  const words = sentiText.words_and_emoticons;
  const negated = [1, 2, 3].some((back) => index - back >= 0 && NEGATIONS.has(words[index - back]!.toLowerCase()));
  sentiments.push(negated ? crypto * NEGATION_SCALAR : crypto);
  return sentiments;
};

export type Stance = 'bullish' | 'bearish' | 'neutral';

/** VADER's documented thresholds: compound >= 0.05 positive, <= -0.05 negative, else neutral. */
export const STANCE_THRESHOLD = 0.05;

export function stanceOf(compound: number): Stance {
  if (compound >= STANCE_THRESHOLD) return 'bullish';
  if (compound <= -STANCE_THRESHOLD) return 'bearish';
  return 'neutral';
}

/** VADER's compound score (-1..1, 4 decimals) of a text, with the crypto lexicon. */
export function sentimentScore(text: string): number {
  if (text.trim() === '') return 0;
  return analyzer.polarity_scores(text).compound;
}

/** VADER alone, without the crypto lexicon: the baseline the lexicon is measured against. */
export function plainVaderScore(text: string): number {
  withCryptoLexicon = false;
  try {
    return sentimentScore(text);
  } finally {
    withCryptoLexicon = true;
  }
}

/**
 * How the scorer did on the held-out half of test/fixtures/sentiment-labelled-400.json (200 real
 * posts labelled by hand), as npm run measure:sentiment prints it; a test keeps the two equal.
 */
export const SENTIMENT_HELDOUT = { posts: 200, accuracy: 0.515, accuracy_ci95: [0.446, 0.583], kappa: 0.247, majority_baseline: 0.435, vader_alone: 0.5 } as const;

export const SENTIMENT_QUALITY = `Sentiment (VADER + crypto lexicon) on ${SENTIMENT_HELDOUT.posts} held-out hand-labelled real posts: three-way accuracy ${(SENTIMENT_HELDOUT.accuracy * 100).toFixed(1)}% (95% ${(SENTIMENT_HELDOUT.accuracy_ci95[0] * 100).toFixed(1)}-${(SENTIMENT_HELDOUT.accuracy_ci95[1] * 100).toFixed(1)}%), Cohen's kappa ${SENTIMENT_HELDOUT.kappa.toFixed(2)}, against ${(SENTIMENT_HELDOUT.majority_baseline * 100).toFixed(1)}% for always saying neutral (VADER alone ${(SENTIMENT_HELDOUT.vader_alone * 100).toFixed(1)}%): treat single-post stances as weak evidence and shares over many posts as the signal.`;
