// npm run measure:kol — how the KOL call rule (server/analytics/calls.ts, exclusionOf) does on the
// hand-labelled sample test/fixtures/kol-calls-labelled.tsv: per sample (tuning, heldout), the
// share of non-calls (adverts, other assets) it leaves out and the share of calls it keeps, with
// Wilson 95% intervals; and how many calls the whole tweet set had before and after the rule.
// The README's KOL figures are this command's output.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXCLUSIONS, exclusionOf, isRetweet, type Exclusion } from '../server/analytics/calls.ts';
import { stanceOf } from '../server/analytics/sentiment.ts';
import { lazySocialDataset } from '../server/providers/social/snapshot.ts';

const FIXTURE = fileURLToPath(new URL('../test/fixtures/kol-calls-labelled.tsv', import.meta.url));
const SECOND = fileURLToPath(new URL('../test/fixtures/kol-calls-second-labeller.tsv', import.meta.url));
const KEPT = fileURLToPath(new URL('../test/fixtures/kol-calls-kept-sample.tsv', import.meta.url));

/** Rows of a labelled TSV with a header line (`post_id author asset label text`), comments skipped. */
function labelledRows(file: string): { id: string; asset: string; label: Label }[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('post_id\t'))
    .map((l) => {
      const [id, , asset, label] = l.split('\t') as [string, string, string, Label];
      if (!LABELS.includes(label)) throw new Error(`${path.basename(file)} row ${id}: unknown label ${label}`);
      return { id, asset, label };
    });
}

export const LABELS = ['call', 'advert', 'not_a_view', 'other_asset'] as const;
export type Label = (typeof LABELS)[number];

export interface Share {
  n: number;
  k: number;
  share: number | null;
  ci95: [number, number] | null;
}

export interface SampleMeasure {
  sample: string;
  rows: number;
  labels: Record<Label, number>;
  /** Of the rows labelled advert or other_asset, how many the rule leaves out. */
  non_calls_excluded: Share;
  /** Of the adverts, how many the rule leaves out (for any reason). */
  adverts_excluded: Share;
  /** Of the rows labelled call, how many the rule keeps. */
  calls_kept: Share;
  /** Of the rows the rule keeps, how many are labelled call. */
  kept_are_calls: Share;
  excluded_by: Record<Exclusion, number>;
}

function wilson(k: number, n: number): Share {
  if (n === 0) return { n, k, share: null, ci95: null };
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { n, k, share: p, ci95: [Math.max(0, c - h), Math.min(1, c + h)] };
}

export interface Agreement {
  rows: number;
  /** Rows both labellers gave the same label. */
  agreed: number;
  /** Cohen's kappa over the four labels: agreement beyond what the two label mixes give by chance. */
  kappa: number;
  /** Agreement on call versus not a call. */
  call_agreed: number;
}

/** The second labeller's blind labels against the first's, row by row. */
export function agreement(first: { id: string; asset: string; label: Label }[]): Agreement {
  const second = new Map(labelledRows(SECOND).map((r) => [`${r.id}/${r.asset}`, r.label]));
  const pairs = first.map((r) => {
    const b = second.get(`${r.id}/${r.asset}`);
    if (!b) throw new Error(`the second labeller has no label for ${r.id}/${r.asset}`);
    return [r.label, b] as const;
  });
  const n = pairs.length;
  const agreed = pairs.filter(([a, b]) => a === b).length;
  const chance = LABELS.reduce((sum, l) => sum + (pairs.filter(([a]) => a === l).length / n) * (pairs.filter(([, b]) => b === l).length / n), 0);
  return { rows: n, agreed, kappa: (agreed / n - chance) / (1 - chance), call_agreed: pairs.filter(([a, b]) => (a === 'call') === (b === 'call')).length };
}

export function measureCallRule(): {
  samples: SampleMeasure[];
  tweets: { candidates: number; calls: number; excluded_by: Record<Exclusion, number> };
  agreement: Agreement;
  /** Of the kept-call sample labelled blind, the share that are calls; and how many the rule still keeps. */
  kept_sample: { precision: Share; still_kept: number };
} {
  const posts = lazySocialDataset()().byPlatform('twitter');
  const byId = new Map(posts.map((p) => [p.id, p]));
  const rows = fs
    .readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('sample\t'))
    .map((l) => {
      const [sample, id, asset, label] = l.split('\t') as [string, string, string, Label];
      if (!LABELS.includes(label)) throw new Error(`row ${id}: unknown label ${label}`);
      const post = byId.get(id);
      if (!post) throw new Error(`post ${id} of the labelled sample is not in the social dataset`);
      return { sample, id, asset, label, excluded: exclusionOf(post, asset) };
    });
  const samples = [...new Set(rows.map((r) => r.sample))].map((sample): SampleMeasure => {
    const rs = rows.filter((r) => r.sample === sample);
    const non = rs.filter((r) => r.label !== 'call');
    const ads = rs.filter((r) => r.label === 'advert');
    const calls = rs.filter((r) => r.label === 'call');
    const kept = rs.filter((r) => r.excluded === null);
    const by = Object.fromEntries(EXCLUSIONS.map((e) => [e, 0])) as Record<Exclusion, number>;
    for (const r of rs) if (r.excluded) by[r.excluded]++;
    return {
      sample,
      rows: rs.length,
      labels: Object.fromEntries(LABELS.map((l) => [l, rs.filter((r) => r.label === l).length])) as Record<Label, number>,
      non_calls_excluded: wilson(non.filter((r) => r.excluded !== null).length, non.length),
      adverts_excluded: wilson(ads.filter((r) => r.excluded !== null).length, ads.length),
      calls_kept: wilson(calls.filter((r) => r.excluded === null).length, calls.length),
      kept_are_calls: wilson(kept.filter((r) => r.label === 'call').length, kept.length),
      excluded_by: by,
    };
  });
  const tweetBy = Object.fromEntries(EXCLUSIONS.map((e) => [e, 0])) as Record<Exclusion, number>;
  let candidates = 0;
  let calls = 0;
  for (const p of posts) {
    if (isRetweet(p.text) || stanceOf(p.compound) === 'neutral') continue;
    for (const a of p.assets) {
      candidates++;
      const why = exclusionOf(p, a);
      if (why) tweetBy[why]++;
      else calls++;
    }
  }
  const kept = labelledRows(KEPT);
  const stillKept = kept.filter((r) => exclusionOf(byId.get(r.id)!, r.asset) === null).length;
  return {
    samples,
    tweets: { candidates, calls, excluded_by: tweetBy },
    agreement: agreement(rows.map((r) => ({ id: r.id, asset: r.asset, label: r.label }))),
    kept_sample: { precision: wilson(kept.filter((r) => r.label === 'call').length, kept.length), still_kept: stillKept },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const m = measureCallRule();
  const pct = (s: Share) => (s.share === null ? 'n/a' : `${(s.share * 100).toFixed(1)}% (${s.k}/${s.n}; 95% ${(s.ci95![0] * 100).toFixed(1)}-${(s.ci95![1] * 100).toFixed(1)}%)`);
  for (const s of m.samples) {
    console.log(`${s.sample}: ${s.rows} rows labelled ${LABELS.map((l) => `${s.labels[l]} ${l}`).join(', ')}`);
    console.log(`  non-calls left out: ${pct(s.non_calls_excluded)}`);
    console.log(`  adverts left out:   ${pct(s.adverts_excluded)}`);
    console.log(`  calls kept:         ${pct(s.calls_kept)}`);
    console.log(`  kept that are calls: ${pct(s.kept_are_calls)}`);
    console.log(`  left out by reason: ${JSON.stringify(s.excluded_by)}`);
  }
  console.log(`second labeller (blind, ${m.agreement.rows} rows): ${m.agreement.agreed} agreed (${((m.agreement.agreed / m.agreement.rows) * 100).toFixed(1)}%), Cohen's kappa ${m.agreement.kappa.toFixed(3)}; call vs not ${m.agreement.call_agreed}/${m.agreement.rows}`);
  console.log(`kept-call sample labelled blind: calls ${pct(m.kept_sample.precision)}; the rule still keeps ${m.kept_sample.still_kept} of ${m.kept_sample.precision.n}`);
  console.log(`all tweets: ${m.tweets.candidates} stance-bearing (post, asset) pairs without retweets; ${m.tweets.calls} calls under the rule; left out ${JSON.stringify(m.tweets.excluded_by)}`);
}
