import { expect, test } from '@playwright/test';
import { DEMO_HOST_URL, gotoHost, iframe, trackPanelReady, waitForPanel } from './helpers';

// A phone, with the browser's own handling of pages wider than the screen (it zooms them out).
test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 3 });

test('on a phone the open panel fits the visible screen even when the host page is wider', async ({ page }) => {
  await trackPanelReady(page);
  // The host page is wider than the screen from the start (a long unbroken line, as in a <pre>).
  await page.addInitScript((host) => {
    if (location.origin !== host) return;
    document.addEventListener('DOMContentLoaded', () => {
      const pre = document.createElement('pre');
      pre.textContent = 'x'.repeat(300);
      document.querySelector('main')!.appendChild(pre);
    });
  }, DEMO_HOST_URL);
  await gotoHost(page, '/');
  // The phone browser widens the layout viewport to the page: the case where a panel sized by
  // CSS alone became as wide as the page, its header and Send off the screen.
  expect(await page.evaluate(() => innerWidth)).toBeGreaterThan(600);
  // Opened from the host page's API: on the zoomed-out page Playwright's pointer check of the
  // fixed launcher is not what this test is about.
  await page.evaluate(() => (window as unknown as { Parley: { open(): void } }).Parley.open());
  const p = await waitForPanel(page);

  // The frame covers the visual viewport (what the screen shows) …
  const fit = await page.evaluate(() => {
    const vv = window.visualViewport!;
    const r = document.querySelector('div[data-parley]')!.shadowRoot!.querySelector('iframe')!.getBoundingClientRect();
    return { vv: { x: vv.offsetLeft, y: vv.offsetTop, w: vv.width, h: vv.height }, r: { x: r.x, y: r.y, w: r.width, h: r.height } };
  });
  expect(Math.abs(fit.r.x - fit.vv.x)).toBeLessThan(2);
  expect(Math.abs(fit.r.y - fit.vv.y)).toBeLessThan(2);
  expect(Math.abs(fit.r.w - fit.vv.w)).toBeLessThan(2);
  expect(Math.abs(fit.r.h - fit.vv.h)).toBeLessThan(2);
  // … and inside it the header and Send are within the frame's own screen, at a phone's width.
  for (const selector of ['.pw-header', 'button.pw-send', 'textarea.pw-input']) {
    const box = await p.locator(selector).evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, w: innerWidth, h: innerHeight };
    });
    expect(box.left, selector).toBeGreaterThanOrEqual(0);
    expect(box.top, selector).toBeGreaterThanOrEqual(0);
    expect(box.right, selector).toBeLessThanOrEqual(box.w + 1);
    expect(box.bottom, selector).toBeLessThanOrEqual(box.h + 1);
    expect(box.w, 'laid out at the phone width').toBeLessThanOrEqual(400);
  }
  await expect(iframe(page)).toBeVisible();
});
