import { expect, test, type Page } from '@playwright/test';
import { APP_URL, DEMO_HOST_URL } from './helpers';

const embed = (origin: string) => `${APP_URL}/embed/demo-help?origin=${encodeURIComponent(origin)}`;

test('the embed page refuses an origin that is not allowed', async ({ request }) => {
  const evil = await request.get(embed('http://evil.example'));
  expect(evil.status()).toBe(403);
  expect(await evil.text()).not.toContain('pw-panel');

  const ok = await request.get(embed(DEMO_HOST_URL));
  expect(ok.status()).toBe(200);
  const csp = ok.headers()['content-security-policy'];
  expect(csp, 'content-security-policy header').toBeTruthy();
  expect(csp).toContain('frame-ancestors');
  const ancestors = csp.split(';').find((d) => d.trim().startsWith('frame-ancestors'))!;
  expect(ancestors.trim().split(/\s+/)).toContain(DEMO_HOST_URL);
  expect(ancestors).not.toContain('*');
  expect(ancestors).not.toContain('evil.example');
  expect(await ok.text()).toContain('pw-panel');
});

/** Serves a made-up page on `origin` (no network) that frames the embed page at `src`. */
async function framingPage(page: Page, origin: string, src: string) {
  await page.route(`${origin}/`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><title>framer</title><iframe id="f" src="${src}" width="400" height="600"></iframe>`,
    }),
  );
  const loaded = page.waitForEvent('framenavigated', (f) => f !== page.mainFrame());
  await page.goto(`${origin}/`);
  await loaded;
}

test('a browser refuses to show the panel inside a page on a foreign origin, even if it lies about its origin', async ({
  page,
}) => {
  // Positive control: the same kind of page on an allowed origin (http://localhost:3101 is one of
  // demo-help's allowed origins) does show the panel.
  const allowed = DEMO_HOST_URL.replace('127.0.0.1', 'localhost');
  await framingPage(page, allowed, embed(allowed));
  await expect(page.frameLocator('#f').locator('.pw-panel')).toBeVisible();

  // A foreign page that claims to be the demo host: the server lets the request through (it
  // cannot know), but frame-ancestors makes the browser block the frame.
  const blocked: string[] = [];
  page.on('console', (m) => {
    if (/frame-ancestors|Refused to frame/i.test(m.text())) blocked.push(m.text());
  });
  const response = page.waitForResponse((r) => r.url().startsWith(`${APP_URL}/embed/`));
  await framingPage(page, 'http://evil.example', embed(DEMO_HOST_URL));
  expect((await response).status()).toBe(200);
  await expect.poll(() => blocked.length, { message: 'the browser reports a frame-ancestors violation' }).toBeGreaterThan(0);
  await expect(page.frameLocator('#f').locator('.pw-panel')).toHaveCount(0);
  const child = page.frames().find((f) => f !== page.mainFrame());
  expect(child?.url() ?? '').not.toMatch(/^http:\/\/127\.0\.0\.1:3100\/embed\//);
});
