// What every browser test starts: the dashboard bundle (built if missing), a database of its own,
// the anvil devnet when asked for, the service (its settings may name the devnet), and Chromium.
// Torn down by close(), newest first; whatever started is stopped also when a later step fails.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startDevnet, type Devnet } from '../../server/devnet/devnet.ts';
import { WEB_DIST } from '../../server/dashboard/ui.ts';
import type { RunningService } from '../../server/runtime.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.ts';

export interface DashboardRig<D extends Devnet | undefined = Devnet | undefined> {
  db: TestDatabase;
  devnet: D;
  service: RunningService;
  browser: Browser;
  close(): Promise<void>;
}

interface RigOptions {
  /** The service's settings; a function of the devnet when there is one. */
  env?: Record<string, string> | ((devnet: Devnet) => Record<string, string>);
}

export function startDashboardRig(opts: RigOptions & { devnet: true }): Promise<DashboardRig<Devnet>>;
export function startDashboardRig(opts?: RigOptions & { devnet?: false; env?: Record<string, string> }): Promise<DashboardRig<undefined>>;
export async function startDashboardRig(opts: RigOptions & { devnet?: boolean } = {}): Promise<DashboardRig> {
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) await buildWeb();
  const started: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const stop of started.reverse()) await stop();
  };
  try {
    const db = await createTestDatabase();
    started.push(() => db.drop());
    const devnet = opts.devnet ? await startDevnet() : undefined;
    if (devnet) started.push(() => devnet.stop());
    const env = typeof opts.env === 'function' ? opts.env(devnet!) : (opts.env ?? {});
    const service = await startTestService(db.url, env);
    started.push(() => service.close());
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    started.push(() => browser.close());
    return { db, devnet, service, browser, close };
  } catch (err) {
    await close();
    throw err;
  }
}
