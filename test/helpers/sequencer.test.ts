// The suite's start order (test/helpers/sequencer.ts): longest first within a project, projects
// kept together in vitest's order, the files that wait for background work after the rest.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOrder } from './sequencer.ts';

describe('startOrder', () => {
  it('keeps projects together in their order, puts the longest first and a late file where 75% of the time is before it', () => {
    const order = startOrder([
      { item: 'iso-short', project: 'isolated', late: false, seconds: 1 },
      { item: 'iso-long', project: 'isolated', late: false, seconds: 30 },
      { item: 'image', project: 'shared', late: true, seconds: 200 },
      { item: 'short', project: 'shared', late: false, seconds: 10 },
      { item: 'long', project: 'shared', late: false, seconds: 50 },
      { item: 'tie-a', project: 'shared', late: false, seconds: 20 },
      { item: 'tie-b', project: 'shared', late: false, seconds: 20 },
    ]);
    // 100 s of early files: the image test goes once 75 s are before it (long 50, tie-a 20, tie-b 20).
    expect(order).toEqual(['iso-long', 'iso-short', 'long', 'tie-a', 'tie-b', 'image', 'short']);
  });

  it('a late file of a project whose other files are all short goes last, not first', () => {
    expect(startOrder([{ item: 'image', project: 'p', late: true, seconds: 9 }, { item: 'a', project: 'p', late: false, seconds: 1 }], 1)).toEqual(['a', 'image']);
  });

  it('test/durations.json names files that exist (a renamed file would fall back to the default)', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const durations = JSON.parse(fs.readFileSync(path.join(root, 'test/durations.json'), 'utf8')) as Record<string, number>;
    const missing = Object.keys(durations).filter((f) => !fs.existsSync(path.join(root, f)));
    expect(missing).toEqual([]);
    expect(Object.keys(durations).length).toBeGreaterThan(100);
  });
});
