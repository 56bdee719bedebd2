// The order test files start in: the longest first, so that the run does not end on one long file
// while the other workers idle (longest-processing-time-first scheduling), and files that wait for
// work `npm test` starts in the background after every other file has started.
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

/** Files that wait for the container image `npm test` builds in the background (scripts/test.ts). */
const LAST = new Set(['test/image/image.test.ts']);
const DEFAULT_SECONDS = 5;
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
 * (each project's files together), files marked last go after the rest of their project, and the
 * others go longest first, ties in the given order.
 */
export function startOrder<T>(files: { item: T; project: string; last: boolean; seconds: number }[]): T[] {
  const projectRank = new Map<string, number>();
  for (const f of files) if (!projectRank.has(f.project)) projectRank.set(f.project, projectRank.size);
  return files
    .map((f, index) => ({ ...f, index, rank: projectRank.get(f.project)! }))
    .sort((a, b) => a.rank - b.rank || Number(a.last) - Number(b.last) || b.seconds - a.seconds || a.index - b.index)
    .map((f) => f.item);
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
    return startOrder(base.map((spec) => ({ item: spec, project: spec.project.name, last: LAST.has(rel(spec)), seconds: seconds(spec) })));
  }
}
