// The sentiment classifier (VADER + crypto lexicon) on 130 real posts from the data, labelled by
// hand (test/fixtures/sentiment-labelled.json), and the lexicon's documented behaviour.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureSentiment } from '../../scripts/measure-sentiment.ts';
import { CRYPTO_LEXICON, plainVaderScore, SENTIMENT_HELDOUT, sentimentScore, stanceOf, type Stance } from '../../server/analytics/sentiment.ts';
import { unwrapByteString } from '../../server/providers/social/clean.ts';

const fixture = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../fixtures/sentiment-labelled.json'), 'utf8')) as {
  items: { id: string; text: string; label: Stance }[];
};

function evaluate(score: (t: string) => number) {
  const labels: Stance[] = ['bullish', 'bearish', 'neutral'];
  const confusion = Object.fromEntries(labels.map((l) => [l, Object.fromEntries(labels.map((p) => [p, 0]))])) as Record<Stance, Record<Stance, number>>;
  // Texts are as in the raw CSV; the build unwraps tweets stored as byte strings before scoring.
  for (const item of fixture.items) confusion[item.label][stanceOf(score(unwrapByteString(item.text)))]++;
  const correct = labels.reduce((s, l) => s + confusion[l][l], 0);
  return { accuracy: correct / fixture.items.length, confusion };
}

describe('accuracy on the hand-labelled posts', () => {
  it('holds at least 100 real posts with labels', () => {
    expect(fixture.items.length).toBeGreaterThanOrEqual(100);
    expect(new Set(fixture.items.map((i) => i.label))).toEqual(new Set(['bullish', 'bearish', 'neutral']));
  });

  // Measured 2026-11-21: three-way accuracy 0.531 (VADER alone 0.508); where both the label and the
  // prediction have a stance, the polarity is right 42 times in 54 (0.778). Most errors are neutral
  // news headlines VADER reads as positive. The floors below catch regressions, not a target.
  it('three-way accuracy stays at least 0.5 and the crypto lexicon does not do worse than VADER alone', () => {
    const withLexicon = evaluate(sentimentScore);
    const plain = evaluate(plainVaderScore);
    const c = withLexicon.confusion;
    const polar = c.bullish.bullish + c.bearish.bearish;
    const polarity = polar / (polar + c.bullish.bearish + c.bearish.bullish);
    console.log(`sentiment accuracy: VADER+crypto ${withLexicon.accuracy.toFixed(3)}, VADER alone ${plain.accuracy.toFixed(3)}; polarity ${polarity.toFixed(3)}`, JSON.stringify(c));
    expect(withLexicon.accuracy).toBeGreaterThanOrEqual(0.5);
    expect(polarity).toBeGreaterThanOrEqual(0.7);
    expect(withLexicon.accuracy).toBeGreaterThanOrEqual(plain.accuracy);
  });
});

describe('the crypto lexicon', () => {
  it('scores crypto slang VADER does not know: moon and hodl positive, rekt and rug negative', () => {
    expect(plainVaderScore('I got rekt')).toBe(0);
    expect(sentimentScore('I got rekt')).toBeLessThan(-0.05);
    expect(sentimentScore('the dev pulled the rug')).toBeLessThan(-0.05);
    expect(sentimentScore('ETH to the moon')).toBeGreaterThan(0.05);
    expect(sentimentScore('just hodl')).toBeGreaterThan(0.05);
  });

  it("follows VADER's negation rule: 'not bullish' is negative", () => {
    expect(sentimentScore('I am bullish')).toBeGreaterThan(0.05);
    expect(sentimentScore('I am not bullish')).toBeLessThan(-0.05);
  });

  it('leaves other words to VADER unchanged', () => {
    for (const t of ['This is a great day', 'Terrible news for everyone', 'The meeting is on Tuesday']) expect(sentimentScore(t)).toBe(plainVaderScore(t));
  });

  it('every entry is on VADER\'s -4..4 scale', () => {
    for (const v of Object.values(CRYPTO_LEXICON)) expect(Math.abs(v)).toBeLessThanOrEqual(4);
  });
});

describe('the 400-post labelled set (npm run measure:sentiment)', () => {
  it('holds at least 400 real posts split into tuning and held-out halves, none from the lexicon\'s own tuning set', () => {
    const big = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../fixtures/sentiment-labelled-400.json'), 'utf8')) as { items: { id: string; split: string; label: string }[] };
    expect(big.items.length).toBeGreaterThanOrEqual(400);
    expect(big.items.filter((i) => i.split === 'heldout').length).toBe(200);
    const old = new Set(fixture.items.map((i) => i.id));
    expect(big.items.some((i) => old.has(i.id))).toBe(false);
  });

  it('the held-out figures docs/data.md and get_capabilities state are what the command measures', () => {
    const held = measureSentiment().find((m) => m.split === 'heldout')!;
    expect(held.n).toBe(SENTIMENT_HELDOUT.posts);
    expect(held.accuracy).toBeCloseTo(SENTIMENT_HELDOUT.accuracy, 3);
    expect(held.accuracy_ci95[0]).toBeCloseTo(SENTIMENT_HELDOUT.accuracy_ci95[0], 3);
    expect(held.accuracy_ci95[1]).toBeCloseTo(SENTIMENT_HELDOUT.accuracy_ci95[1], 3);
    expect(held.kappa).toBeCloseTo(SENTIMENT_HELDOUT.kappa, 3);
    expect(held.majority_baseline).toBeCloseTo(SENTIMENT_HELDOUT.majority_baseline, 3);
    expect(held.vader_alone_accuracy).toBeCloseTo(SENTIMENT_HELDOUT.vader_alone, 3);
  });
});
