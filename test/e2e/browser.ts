/// <reference lib="dom" />
// What the browser tests share: Debian's Chromium and its flags, axe-core's WCAG 2 A/AA check, the
// sideways-overflow check, the two viewports and the two colour schemes, and screenshots on request.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Debian's chromium-headless-shell: the same Chromium build as the `chromium` package, as the
 * headless shell (the "old" headless mode, without the desktop browser's UI layers), which is
 * what Playwright itself runs headless tests on. The three heaviest browser test files
 * (dashboard, dashboard-ui, billing) used 43 and 48 CPU-s of the browser with it against 79 and
 * 85 with `/usr/bin/chromium --headless` (two runs each, alternated, 2026-11-27), the same tests
 * passing. Playwright adds `--headless` itself.
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where screenshots go (git-ignored). */
const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts');

/**
 * A screenshot for a person to look at, as test-artifacts/<file>, taken only with SCREENSHOTS=1
 * (`SCREENSHOTS=1 npm test -- test/e2e`). The tests check the pages through the DOM, axe-core and
 * the overflow check, never through these pictures, and a full-page PNG costs the browser about
 * half a CPU-second to lay out, capture and encode: dashboard.test.ts and billing.test.ts used 63-72
 * CPU-s with their 21 screenshots and 54-63 without (two runs each, side by side, 2026-11-27).
 */
export async function screenshot(page: Page, file: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  if (!process.env.SCREENSHOTS) return;
  await page.screenshot({ path: path.join(ARTIFACTS, file), fullPage: opts.fullPage ?? true });
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2 A/AA checks by axe-core in the page (labels, contrast, roles); serious or critical findings fail. */
export async function expectAccessibleIn(target: Page): Promise<void> {
  // Evaluated through the DevTools protocol: the page's CSP (rightly) refuses injected script tags.
  // Once per document: the dashboard moves between views without loading a new one, and compiling
  // axe's 500 kB again for each check was most of the browser's CPU for accessibility (12 of 41 s
  // in dashboard-ui.test.ts, where the checks themselves ran 3 s).
  if (!(await target.evaluate(() => 'axe' in window))) await target.evaluate(AXE_SOURCE);
  const violations = await target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations).toEqual([]);
}

/**
 * How far the page scrolls sideways beyond the viewport (0: nothing overflows), and what sticks out:
 * elements and text runs reaching past the viewport that are not inside a sideways scroll box.
 */
export async function horizontalOverflow(target: Page): Promise<{ overflow: number; culprits: string[] }> {
  return target.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const overflow = document.documentElement.scrollWidth - width;
    if (overflow <= 0) return { overflow, culprits: [] };
    const scrolled = (e: Element | null) => {
      for (let p = e?.parentElement; p; p = p.parentElement) if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
      return false;
    };
    const name = (e: Element) => `${e.tagName.toLowerCase()}.${String(e.className)}`;
    const culprits: string[] = [];
    for (const e of Array.from(document.querySelectorAll('body *'))) {
      if (!scrolled(e) && e.getBoundingClientRect().right > width + 1) culprits.push(`${name(e)} (${Math.round(e.getBoundingClientRect().right)} px)`);
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(n);
      const right = range.getBoundingClientRect().right;
      if (right > width + 1 && !scrolled(n.parentElement)) culprits.push(`text "${(n.textContent ?? '').slice(0, 40)}" in ${name(n.parentElement!)} (${Math.round(right)} px)`);
    }
    return { overflow, culprits: culprits.slice(0, 10) };
  });
}

/**
 * No sideways overflow once the layout has settled: after a viewport change the charts resize on
 * the next frames (a ResizeObserver, then an animation frame), so an overflow is looked at again
 * for up to 5 s before it counts; one that stays fails with what sticks out.
 */
export async function expectNoOverflowIn(where: string, target: Page): Promise<void> {
  let { overflow, culprits } = await horizontalOverflow(target);
  const deadline = Date.now() + 5000;
  while (overflow > 0 && Date.now() < deadline) {
    await target.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    ({ overflow, culprits } = await horizontalOverflow(target));
  }
  expect(overflow, `${where}: the page overflows sideways by ${overflow} px: ${culprits.join(', ')}`).toBeLessThanOrEqual(0);
}

export const VIEWPORTS = [
  { width: 1280, height: 900 },
  { width: 375, height: 740 },
] as const;
export const SCHEMES = ['light', 'dark'] as const;

/** Emulates a system colour scheme and checks the page follows it (the root background changes). */
export async function useScheme(target: Page, scheme: 'light' | 'dark'): Promise<void> {
  await target.emulateMedia({ colorScheme: scheme });
  const background = await target.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect(background).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(246, 248, 250)');
}

export type TestWallet = 'Test Wallet' | 'Test Solana Wallet';

/** Opens the dashboard of the service at `baseUrl` and signs in with an injected wallet; done once the API keys page shows. */
export async function signInWith(page: Page, baseUrl: string, wallet: TestWallet = 'Test Wallet'): Promise<void> {
  await page.goto(`${baseUrl}/app/`);
  await page.getByRole('button', { name: wallet, exact: true }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
}

/** Signs out and waits for the sign-in screen: the sign-out request must finish before the next page load, or that load is still signed in. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to cryptomcp' }).waitFor();
}
