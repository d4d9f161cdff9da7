import { expect, test, type Page } from '@playwright/test';
import { APP_URL, DEMO_HOST_URL } from './helpers';

const embed = (origin: string) => `${APP_URL}/embed/demo-help?origin=${encodeURIComponent(origin)}`;

test('the embed page refuses an origin that is not allowed', async ({ request }) => {
  const evil = await request.get(embed('http://evil.example'));
  expect(evil.status()).toBe(403);
  expect(await evil.text()).not.toContain('pw-config');

  const ok = await request.get(embed(DEMO_HOST_URL));
  expect(ok.status()).toBe(200);
  const csp = ok.headers()['content-security-policy'];
  expect(csp, 'content-security-policy header').toBeTruthy();
  expect(csp).toContain('frame-ancestors');
  const ancestors = csp.split(';').find((d) => d.trim().startsWith('frame-ancestors'))!;
  expect(ancestors.trim().split(/\s+/)).toContain(DEMO_HOST_URL);
  expect(ancestors).not.toContain('*');
  expect(ancestors).not.toContain('evil.example');
  expect(await ok.text()).toContain('id="pw-config"');
});

/**
 * Opens a real page of the local server on `pageUrl` (so the browser treats it as a loopback
 * page, like the app) and adds an iframe of the embed page `src` to it; resolves when the iframe
 * has loaded (or failed to).
 */
async function framingPage(page: Page, pageUrl: string, src: string) {
  await page.goto(pageUrl);
  await page.evaluate(
    (src) =>
      new Promise<void>((resolve) => {
        const f = document.createElement('iframe');
        f.id = 'f';
        f.width = '400';
        f.height = '600';
        f.onload = () => resolve();
        f.src = src;
        document.body.appendChild(f);
      }),
    src,
  );
}

test('a browser refuses to show the panel inside a page on a foreign origin, even if it lies about its origin', async ({
  page,
}) => {
  const problems: string[] = [];
  page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText}`));
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/frame-ancestors/i.test(m.text())) violations.push(m.text());
  });

  // Positive control: http://localhost:3101 is one of demo-help's allowed origins; a page there
  // framing the embed page does show the panel.
  const allowed = DEMO_HOST_URL.replace('127.0.0.1', 'localhost');
  await framingPage(page, `${allowed}/`, embed(allowed));
  await expect(page.frameLocator('#f').locator('.pw-panel')).toBeVisible();
  expect(violations).toEqual([]);

  // http://localhost:3100 is not an allowed origin (and not 'self', which is 127.0.0.1:3100). A
  // page there that claims to be the demo host: the server answers (it cannot know), but
  // frame-ancestors makes the browser refuse to show it.
  const foreign = APP_URL.replace('127.0.0.1', 'localhost');
  const response = page.waitForResponse((r) => r.url().startsWith(`${APP_URL}/embed/`));
  await framingPage(page, `${foreign}/healthz`, embed(DEMO_HOST_URL));
  expect((await response).status()).toBe(200);
  await expect
    .poll(() => violations.length, { message: 'the browser reports a frame-ancestors violation' })
    .toBeGreaterThan(0);
  expect(violations[0]).toMatch(/Framing 'http:\/\/127\.0\.0\.1:3100\/' violates .*frame-ancestors.*blocked/s);
  await expect(page.frameLocator('#f').locator('.pw-panel')).toHaveCount(0);
  const child = page.frames().find((f) => f !== page.mainFrame());
  expect(child?.url() ?? '').not.toMatch(/^http:\/\/127\.0\.0\.1:3100\/embed\//);
  // Blocked because of the response's policy, not for any other reason (e.g. network checks).
  expect(problems.filter((p) => !p.includes('/favicon.ico'))).toEqual([
    `${embed(DEMO_HOST_URL)}: net::ERR_BLOCKED_BY_RESPONSE`,
  ]);
});
