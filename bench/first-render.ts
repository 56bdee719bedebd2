/// <reference lib="dom" />
// npm run bench:first-render — how soon the dashboard shows something on a slow connection (issue
// 36 item 2): Chromium with its network throttled by the DevTools protocol to 400 ms round trips and
// 400 kbit/s each way, a fresh profile (nothing cached), the signed-out address /app/ (what a visitor
// meets after the public page's "start" button). Per run, from navigation start:
//  - first paint with content (the Paint Timing API's first-contentful-paint);
//  - first content: the sign-in heading and its text in the page (time-to-first-content);
//  - wallets: the wallet picker listed (the page is usable).
// Two front ends, side by side on the same service: "before", a build of a git ref (default main)
// exported into .bench/ and built there with its own Vite config, and "after", this checkout's
// web/dist (npm run build:web first). Both are served by this checkout's dashboardUi
// (server/dashboard/ui.ts); a build without .br/.gz files beside its assets is served as main
// serves it, uncompressed. Median of BENCH_RUNS (default 3) runs each.
//   npm run bench:first-render [-- <ref>]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { dashboardUi } from '../server/dashboard/ui.ts';
import { startEmbedded } from '../server/db/embedded.ts';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/e2e/browser.ts';
import { startTestService } from '../test/helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const REF = process.argv[2] ?? 'main';
const THROTTLE = { offline: false, latency: 400, downloadThroughput: 400_000 / 8, uploadThroughput: 400_000 / 8 };

/** The ref's web/ exported under .bench/ (inside the checkout, so node_modules resolves) and built there. */
async function buildRef(ref: string): Promise<string> {
  const sha = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = path.join(ROOT, '.bench', 'first-render', sha);
  const dist = path.join(dir, 'web', 'dist');
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} web | tar -x -C ${JSON.stringify(dir)}`], { cwd: ROOT });
    await build({ configFile: path.join(dir, 'web', 'vite.config.ts'), logLevel: 'warn' });
  }
  return `${dist}/`;
}

/** dashboardUi over a given build at /app, everything else (/api, /v1) passed to the service. */
async function frontEnd(dist: string, service: string): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify();
  await app.register(async (ui) => dashboardUi(ui, { dist }), { prefix: '/app' });
  app.get('/*', async (request, reply) => {
    const res = await fetch(`${service}${request.url}`, { headers: { accept: request.headers.accept ?? '*/*' } });
    reply.code(res.status).header('content-type', res.headers.get('content-type') ?? 'application/octet-stream');
    return Buffer.from(await res.arrayBuffer());
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

interface Run {
  fcp: number;
  content: number;
  wallets: number;
  bytes: number;
}

async function measure(url: string): Promise<Run> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 375, height: 740 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', THROTTLE);
    let bytes = 0;
    cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => {
      bytes += e.encodedDataLength;
    });
    page.setDefaultTimeout(120_000);
    await page.goto(`${url}/app/`, { waitUntil: 'commit' });
    // performance.now() counts from the navigation's start; polled every animation frame.
    const content = await page
      .waitForFunction(() => (Array.from(document.querySelectorAll('h2')).some((h) => h.textContent === 'Sign in to cryptomcp') ? performance.now() : false), undefined, { polling: 'raf' })
      .then((h) => h.jsonValue() as Promise<number>);
    const wallets = await page
      .waitForFunction(() => (document.querySelector('.picker') !== null ? performance.now() : false), undefined, { polling: 'raf' })
      .then((h) => h.jsonValue() as Promise<number>);
    const fcp = (await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN)) as number;
    return { fcp, content, wallets, bytes };
  } finally {
    await browser.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-first-render-'));
fs.chmodSync(root, 0o755);
const pg = await startEmbedded(path.join(root, 'pg'));
const service = await startTestService(pg.url, { MCP_SERVERS: 'market-intelligence' });
try {
  const after = path.join(ROOT, 'web', 'dist') + '/';
  if (!fs.existsSync(path.join(after, 'index.html'))) throw new Error('web/dist is not built: run npm run build:web first');
  const builds = [
    { label: `before (${REF})`, dist: await buildRef(REF) },
    { label: 'after (this checkout)', dist: after },
  ];
  console.log(`first render of /app/ (signed out) in Chromium, ${THROTTLE.latency} ms RTT, ${(THROTTLE.downloadThroughput * 8) / 1000} kbit/s, no cache, median of ${RUNS}`);
  for (const b of builds) {
    const front = await frontEnd(b.dist, service.url);
    try {
      const runs: Run[] = [];
      for (let i = 0; i < RUNS; i++) runs.push(await measure(front.url));
      console.log(
        `${b.label.padEnd(24)} first paint ${s(median(runs.map((r) => r.fcp)))}  first content (sign-in heading) ${s(median(runs.map((r) => r.content)))}  wallets listed ${s(median(runs.map((r) => r.wallets)))}  bytes received ${(median(runs.map((r) => r.bytes)) / 1024).toFixed(0)} kB`,
      );
    } finally {
      await front.close();
    }
  }
} finally {
  await service.close();
  await pg.stop();
  fs.rmSync(root, { recursive: true, force: true });
}
