// The order test files start in: the longest first, so that the run does not end on one long file
// while the other workers idle (longest-processing-time-first scheduling), and files that wait for
// work `npm test` starts in the background late: once the files before them add up to LATE_SHARE
// of their project's time, about 400 s into a 550 s run. Last, the image test ran alone at the end
// for 15 s; the build it waits for took 182 s under the suite's load (20:49-20:52 UTC).
//
// vitest's own order is by the last run's durations from its cache in node_modules/.vite, and by
// file size without one: on a fresh clone (CI), size put the 64 s fresh-clone test among the last
// files and the image test among the first third, where it held a worker for 185 s waiting for
// the image build. The durations come from this machine's last full run when the cache has them,
// else from test/durations.json (committed; `npm run test:durations` rewrites it from the report
// of a full `npm test`), else a file counts as DEFAULT_SECONDS.
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Files that wait for the container image `npm test` builds in the background (scripts/test.ts): started late. */
const LATE = new Set(['test/image/image.test.ts']);
const DEFAULT_SECONDS = 5;
const LATE_SHARE = 0.75;
const DURATIONS_FILE = path.join(import.meta.dirname, '..', 'durations.json');

function committedDurations(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The start order of files given in vitest's order: projects stay in the order they first appear
 * (each project's files together), the others go longest first (ties in the given order), and
 * files marked late go where the files before them in their project add up to `lateShare` of the
 * project's seconds.
 */
export function startOrder<T>(files: { item: T; project: string; late: boolean; seconds: number }[], lateShare = LATE_SHARE): T[] {
  const order: T[] = [];
  for (const project of new Set(files.map((f) => f.project))) {
    const mine = files.map((f, index) => ({ ...f, index })).filter((f) => f.project === project);
    const early = mine.filter((f) => !f.late).sort((a, b) => b.seconds - a.seconds || a.index - b.index);
    const late = mine.filter((f) => f.late);
    const total = early.reduce((n, f) => n + f.seconds, 0);
    let before = 0;
    let placed = late.length === 0;
    for (const f of early) {
      if (!placed && before >= lateShare * total) {
        order.push(...late.map((l) => l.item));
        placed = true;
      }
      order.push(f.item);
      before += f.seconds;
    }
    if (!placed) order.push(...late.map((l) => l.item));
  }
  return order;
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order first: it keeps each project's files together (and the isolated ones first).
    const base = await super.sort(files);
    const committed = committedDurations();
    const root = this.ctx.config.root;
    const rel = (spec: TestSpecification) => path.relative(root, spec.moduleId).split(path.sep).join('/');
    const seconds = (spec: TestSpecification) => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      if (cached && !cached.failed && cached.duration > 0) return cached.duration / 1000;
      return committed[rel(spec)] ?? DEFAULT_SECONDS;
    };
    return startOrder(base.map((spec) => ({ item: spec, project: spec.project.name, late: LATE.has(rel(spec)), seconds: seconds(spec) })));
  }
}
