// The public page in Chromium, as a visitor on a phone or a desktop sees it before any sign-in:
// with JavaScript off the prices and servers are there (nothing waits for a bundle); with it on,
// axe-core finds nothing serious in light or dark, and nothing scrolls sideways at 375 or 1280 px
// (the tool tables open).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { expectAccessibleIn, expectNoOverflowIn, SCHEMES, useScheme, VIEWPORTS } from './browser.ts';
import { startDashboardRig, type DashboardRig } from './rig.ts';

let rig: DashboardRig;
let service: RunningService;
let browser: Browser;

beforeAll(async () => {
  rig = await startDashboardRig({ env: { CREDIT_PACKS: '[{"name":"credits-20k","credits":20000,"price_cents":10000}]' } });
  ({ service, browser } = rig);
}, 120_000);

afterAll(async () => {
  await rig?.close();
});

describe('the public page in Chromium', () => {
  it('shows plans in dollars, the servers and a start button with JavaScript off', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: VIEWPORTS[1] });
    const page = await context.newPage();
    await page.goto(`${service.url}/`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/crypto data for AI agents/i);
    const plans = page.getByRole('table').first();
    await expect(plans.textContent()).resolves.toMatch(/\$\d+\.\d\d \/ month/);
    await expect(page.getByRole('link', { name: /start/i }).getAttribute('href')).resolves.toBe('/app/');
    expect(await page.getByRole('heading', { level: 3 }).count()).toBe(service.registry.size);
    await context.close();
  });

  it('passes axe in both schemes and does not scroll sideways at either width, tool tables open', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.url}/`);
    for (const d of await page.locator('details').all()) await d.evaluate((el) => el.setAttribute('open', ''));
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const scheme of SCHEMES) {
        await useScheme(page, scheme);
        await expectAccessibleIn(page);
        await expectNoOverflowIn(`/ at ${viewport.width} px, ${scheme}`, page);
      }
    }
    await context.close();
  });
});
