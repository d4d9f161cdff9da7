import { expect, test, type FrameLocator, type Page, type Response } from '@playwright/test';
import { APP_URL, DEMO_HOST_URL, GREETING, ask, gotoHost, openWithLauncher, trackPanelReady } from './helpers';

const ADMIN = { email: 'admin@e2e.test', password: 'e2e-admin-password' };
const HELLO_ANSWER = /offline demo model/;

/**
 * Collects every Content-Security-Policy violation in the page and its frames (the widget's
 * iframe too): the `securitypolicyviolation` event, re-told on the console, and the browser's own
 * console report. Must be called before `page.goto`.
 */
async function watchCsp(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  page.on('console', (m) => {
    const text = m.text();
    if (text.startsWith('CSP violation') || text.includes('Content Security Policy')) {
      violations.push(`${m.location().url}: ${text}`);
    }
  });
  return violations;
}

/** The policy of a Leptos page, and the nonce its `script-src` names. */
async function policyOf(response: Response | null): Promise<{ csp: string; nonce: string }> {
  expect(response, 'a response').not.toBeNull();
  const csp = (await response!.allHeaders())['content-security-policy'] ?? '';
  expect(csp).toContain("script-src 'self' 'nonce-");
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  const nonce = /'nonce-([^']+)'/.exec(csp)![1];
  return { csp, nonce };
}

test('the console signs in and works under its strict policy, with no violation', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const violations = await watchCsp(page);
  const feed = page.waitForRequest((r) => r.url() === `${APP_URL}/admin/feed`);
  const { csp } = await policyOf(await page.goto(`${APP_URL}/admin/login`));
  expect(csp).toContain("frame-ancestors 'none'");
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  // The live feed is opened by the hydrated page only: the WebAssembly bundle ran.
  await feed;
  await page.getByRole('link', { name: 'Agents', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Agents', exact: true })).toBeVisible();
  // An agent's page previews the embed page in an iframe (same origin, framed by the console).
  await page.getByRole('row', { name: /Parley Help Center/ }).getByRole('link', { name: 'Embed' }).click();
  const preview = page.frameLocator('iframe.c-preview-panel');
  await expect(preview.locator('.pw-panel')).toBeVisible();
  expect(violations).toEqual([]);
  await context.close();
});

test('the widget on the demo host page answers under the embed page policy, with no violation', async ({ page }) => {
  const violations = await watchCsp(page);
  await trackPanelReady(page);
  const embed = page.waitForResponse((r) => r.url().startsWith(`${APP_URL}/embed/demo-help`));
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const { csp } = await policyOf(await embed);
  const ancestors = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('frame-ancestors '))!;
  expect(ancestors.split(' ')).toContain(DEMO_HOST_URL);
  const answer = await ask(p, 'hello');
  await expect(answer.locator('.pw-bubble')).toContainText(HELLO_ANSWER);
  expect(violations).toEqual([]);
});

test('the home page and the embed page on their own: fresh nonces, and an injected script is refused', async ({ page }) => {
  const violations = await watchCsp(page);
  const first = await policyOf(await page.goto(`${APP_URL}/`));
  await expect(page.getByRole('heading', { name: 'Parley', exact: true })).toBeVisible();
  // Every script Leptos wrote carries the header's nonce (the browser hides it from getAttribute,
  // but not from the `nonce` property).
  const nonces = await page.evaluate(() => Array.from(document.scripts, (s) => s.nonce));
  expect(nonces.length).toBeGreaterThan(0);
  expect(new Set(nonces)).toEqual(new Set([first.nonce]));
  const second = await policyOf(await page.reload());
  expect(second.nonce).not.toEqual(first.nonce);

  // The panel on its own page.
  await policyOf(await page.goto(`${APP_URL}/embed/demo-help`));
  // The greeting comes with the panel's first render: count answers only after it is there, or the
  // greeting and the answer arrive together and look like two answers.
  await expect(page.locator('.pw-msg.pw-assistant .pw-bubble')).toHaveText([GREETING]);
  // `ask` only needs `locator`, which a page has too.
  const answer = await ask(page as unknown as FrameLocator, 'hello');
  await expect(answer.locator('.pw-bubble')).toContainText(HELLO_ANSWER);
  expect(violations).toEqual([]);

  // The policy holds: a script injected into the page does not run, and is reported.
  const ran = await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true;';
    document.body.append(s);
    return (window as unknown as { __injected?: boolean }).__injected === true;
  });
  expect(ran).toBe(false);
  await expect.poll(() => violations.length).toBeGreaterThan(0);
});
