// The suite's start order (test/helpers/sequencer.ts): longest first within a project, projects
// kept together in vitest's order, the files that wait for background work after the rest.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOrder } from './sequencer.ts';

describe('startOrder', () => {
  it('keeps projects together in their order, puts the longest first and the waiting files last', () => {
    const order = startOrder([
      { item: 'iso-short', project: 'isolated', last: false, seconds: 1 },
      { item: 'iso-long', project: 'isolated', last: false, seconds: 30 },
      { item: 'image', project: 'shared', last: true, seconds: 200 },
      { item: 'short', project: 'shared', last: false, seconds: 2 },
      { item: 'long', project: 'shared', last: false, seconds: 60 },
      { item: 'tie-a', project: 'shared', last: false, seconds: 5 },
      { item: 'tie-b', project: 'shared', last: false, seconds: 5 },
    ]);
    expect(order).toEqual(['iso-long', 'iso-short', 'long', 'tie-a', 'tie-b', 'short', 'image']);
  });

  it('test/durations.json names files that exist (a renamed file would fall back to the default)', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const durations = JSON.parse(fs.readFileSync(path.join(root, 'test/durations.json'), 'utf8')) as Record<string, number>;
    const missing = Object.keys(durations).filter((f) => !fs.existsSync(path.join(root, f)));
    expect(missing).toEqual([]);
    expect(Object.keys(durations).length).toBeGreaterThan(100);
  });
});
