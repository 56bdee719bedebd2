// The worker's shared default service (test/helpers/shared-service.ts): a file that takes it right
// after another gave it back gets the same running service; once no file has held it for the
// grace period it is closed, and the next file gets a fresh one, never a closed one.
import { describe, expect, it } from 'vitest';
import { acquireSharedService } from '../helpers/shared-service.ts';
import { eventually } from '../helpers/wait.ts';

const answers = async (url: string) => {
  try {
    return (await fetch(`${url}/healthz`)).ok;
  } catch {
    return false;
  }
};

describe('the shared service of a worker', () => {
  it('is handed from one holder to the next, closed after the last leaves, and started afresh after that', async () => {
    const first = await acquireSharedService();
    const url = first.svc.url;
    await first.release();
    const second = await acquireSharedService();
    expect(second.svc.url).toBe(url);
    expect(await answers(url)).toBe(true);
    await second.release();
    await eventually(async () => !(await answers(url)), 10_000, 'the service closed once nobody holds it');
    const third = await acquireSharedService();
    expect(third.svc.url).not.toBe(url);
    expect(await answers(third.svc.url)).toBe(true);
    await third.release();
  });
});
