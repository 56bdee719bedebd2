// npm run measure:sentiment — how the sentiment scorer (VADER + crypto lexicon, stance at ±0.05)
// does on test/fixtures/sentiment-labelled-400.json: per half (tuning, heldout) three-way accuracy
// with a Wilson 95% interval, Cohen's κ against the labels, and the majority baseline (the tuning
// half's most frequent label, predicted for every post), for the scorer and for VADER alone.
// The README's and get_capabilities' sentiment figures are this command's held-out output.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { plainVaderScore, sentimentScore, stanceOf, type Stance } from '../server/analytics/sentiment.ts';

const FIXTURE = fileURLToPath(new URL('../test/fixtures/sentiment-labelled-400.json', import.meta.url));
const STANCES: Stance[] = ['bullish', 'bearish', 'neutral'];

interface Item {
  text: string;
  label: Stance;
  split: 'tuning' | 'heldout';
}

export interface SplitMeasure {
  split: string;
  n: number;
  labels: Record<Stance, number>;
  accuracy: number;
  accuracy_ci95: [number, number];
  kappa: number;
  vader_alone_accuracy: number;
  majority_label: Stance;
  majority_baseline: number;
}

function wilson(k: number, n: number): [number, number] {
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [c - h, c + h];
}

function kappa(labels: readonly Stance[], predicted: readonly Stance[]): number {
  const n = labels.length;
  const observed = labels.filter((l, i) => l === predicted[i]).length / n;
  const expected = STANCES.reduce((s, c) => s + (labels.filter((l) => l === c).length / n) * (predicted.filter((p) => p === c).length / n), 0);
  return (observed - expected) / (1 - expected);
}

export function measureSentiment(): SplitMeasure[] {
  const items = (JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as { items: Item[] }).items;
  const tuning = items.filter((i) => i.split === 'tuning');
  const majority = STANCES.map((s) => [s, tuning.filter((i) => i.label === s).length] as const).sort((a, b) => b[1] - a[1])[0]![0];
  return (['tuning', 'heldout'] as const).map((split) => {
    const rows = items.filter((i) => i.split === split);
    const labels = rows.map((r) => r.label);
    const predicted = rows.map((r) => stanceOf(sentimentScore(r.text)));
    const vader = rows.map((r) => stanceOf(plainVaderScore(r.text)));
    const right = labels.filter((l, i) => l === predicted[i]).length;
    return {
      split,
      n: rows.length,
      labels: Object.fromEntries(STANCES.map((s) => [s, labels.filter((l) => l === s).length])) as Record<Stance, number>,
      accuracy: right / rows.length,
      accuracy_ci95: wilson(right, rows.length),
      kappa: kappa(labels, predicted),
      vader_alone_accuracy: labels.filter((l, i) => l === vader[i]).length / rows.length,
      majority_label: majority,
      majority_baseline: labels.filter((l) => l === majority).length / rows.length,
    };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  for (const m of measureSentiment()) {
    console.log(
      `${m.split}: ${m.n} posts (${m.labels.bullish} bullish, ${m.labels.bearish} bearish, ${m.labels.neutral} neutral); accuracy ${pct(m.accuracy)} (95% ${pct(m.accuracy_ci95[0])}-${pct(m.accuracy_ci95[1])}), Cohen's kappa ${m.kappa.toFixed(3)}; VADER alone ${pct(m.vader_alone_accuracy)}; majority baseline (always ${m.majority_label}) ${pct(m.majority_baseline)}`,
    );
  }
}
