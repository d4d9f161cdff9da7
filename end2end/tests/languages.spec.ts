import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { APP_URL, ask, collectErrors, gotoHost, launcher, openWithLauncher, panelBox, trackPanelReady } from './helpers';

// Issue 44, part 4: every visitor's language. The embed page carries only the chosen language's
// words (English is in the bundle); Arabic is laid out right to left, launcher included.

/** The words the server sends with the embed page for a browser that prefers `language`. */
async function wordsFor(page: Page, language: string): Promise<Record<string, string>> {
  const res = await page.request.get(`${APP_URL}/embed/demo-help`, { headers: { 'accept-language': language } });
  expect(res.ok()).toBe(true);
  const html = await res.text();
  const json = html.split('id="pw-labels">')[1]?.split('</script>')[0];
  expect(json, `the page for ${language} carries its words`).toBeTruthy();
  return JSON.parse(json!);
}

async function box(l: Locator) {
  const b = await l.boundingBox();
  expect(b, 'laid out').not.toBeNull();
  return b!;
}

/** Serious and critical violations axe finds in the page and its frames. */
async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const ARABIC = /[\u0600-\u06FF]/;

test.describe('an Arabic browser', () => {
  test.use({ locale: 'ar' });

  test('gets the Arabic panel, mirrored, launcher included, and axe-clean', async ({ page }) => {
    test.setTimeout(60_000);
    const errors = collectErrors(page);
    const words = await wordsFor(page, 'ar');
    expect(words.send).toMatch(ARABIC);
    await trackPanelReady(page);
    await gotoHost(page); // demo-help: language "auto", launcher on the right by default
    const width = page.viewportSize()!.width;
    await expect(launcher(page)).toHaveAttribute('aria-label', /^فتح المحادثة/);
    // The launcher sits on the mirrored side: the left.
    const l = await box(launcher(page));
    expect(l.x + l.width / 2).toBeLessThan(width / 2);

    const p = await openWithLauncher(page);
    const b = await box(panelBox(page));
    expect(b.x + b.width / 2).toBeLessThan(width / 2);
    await expect(p.locator('html')).toHaveAttribute('lang', 'ar');
    await expect(p.locator('html')).toHaveAttribute('dir', 'rtl');
    await expect(p.locator('.pw-panel')).toHaveAttribute('dir', 'rtl');
    await expect(p.locator('button.pw-send')).toHaveText(words.send);
    await expect(p.locator('textarea.pw-input')).toHaveAttribute('placeholder', words.placeholder);

    // The header is mirrored: the title on the right, the close button on its left.
    const title = await box(p.locator('.pw-title'));
    const close = await box(p.getByRole('button', { name: words.close, exact: true }));
    expect(close.x + close.width).toBeLessThanOrEqual(title.x + 1);
    // The composer too: the send button on the left of the text field.
    const send = await box(p.locator('button.pw-send'));
    const input = await box(p.locator('textarea.pw-input'));
    expect(send.x + send.width).toBeLessThanOrEqual(input.x + 1);

    // A visitor's message sits at the inline end (the left), the answer at the start (the right).
    const answer = await ask(p, 'What are your opening hours?', { sendLabel: words.send });
    const list = await box(p.locator('#pw-list'));
    const mine = await box(p.locator('.pw-msg.pw-visitor .pw-bubble').first());
    const theirs = await box(answer.locator('.pw-bubble'));
    expect(mine.x - list.x).toBeLessThan(40);
    expect(list.x + list.width - (theirs.x + theirs.width)).toBeLessThan(40);
    expect(mine.x).toBeLessThan(theirs.x);
    // The answer's rating buttons speak Arabic too.
    await expect(answer.getByRole('group', { name: words.rate_answer })).toBeVisible();

    expect(await serious(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});

test.describe('a German browser', () => {
  test.use({ locale: 'de-DE' });

  test('gets the German panel, left to right, with only German words sent', async ({ page }) => {
    const errors = collectErrors(page);
    const words = await wordsFor(page, 'de-DE,de;q=0.9,en;q=0.8');
    expect(words.send).not.toBe('Send');
    await trackPanelReady(page);
    await gotoHost(page);
    const width = page.viewportSize()!.width;
    const l = await box(launcher(page));
    expect(l.x + l.width / 2).toBeGreaterThan(width / 2);
    const p = await openWithLauncher(page);
    await expect(p.locator('html')).toHaveAttribute('lang', 'de');
    await expect(p.locator('html')).toHaveAttribute('dir', 'ltr');
    await expect(p.locator('button.pw-send')).toHaveText(words.send);
    await ask(p, 'Hello', { sendLabel: words.send });
    expect(errors).toEqual([]);
  });
});

test('an English browser gets no catalogue with the page (English is in the bundle)', async ({ page }) => {
  const res = await page.request.get(`${APP_URL}/embed/demo-help`, { headers: { 'accept-language': 'en-GB,en;q=0.9' } });
  const html = await res.text();
  expect(html).not.toContain('pw-labels');
  expect(html).toContain('<html lang="en" dir="ltr">');
  expect(res.headers()['vary']).toContain('accept-language');
});
