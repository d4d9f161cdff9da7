import { expect, test, type Browser, type FrameLocator, type Locator, type Page } from '@playwright/test';
import { APP_URL, collectErrors, gotoHost, launcher, openWithLauncher, trackPanelReady, waitIdle } from './helpers';

const OPERATOR = { email: 'olive@e2e.test', password: 'e2e-operator-password' };

/** A real 1×1 PNG (a red dot). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAH/VscvDQAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64');

/** Waits until every image in `images` has loaded its pixels (a `blob:` URL or a console URL). */
async function expectLoaded(images: Locator, count: number): Promise<void> {
  await expect(images).toHaveCount(count);
  for (let i = 0; i < count; i++) {
    await expect
      .poll(() => images.nth(i).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), {
        message: `image ${i} loaded`,
      })
      .toBe(1);
  }
}

/** Attaches files through the panel's (hidden) file picker. */
async function attach(p: FrameLocator, files: { name: string; mimeType: string; buffer: Buffer }[]): Promise<void> {
  await p.locator('input.pw-file').setInputFiles(files);
}

async function signIn(browser: Browser, who: { email: string; password: string }): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${APP_URL}/admin/login`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  return page;
}

test('a visitor attaches an image: thumbnail, the demo model mentions it, it comes back after a reload and shows in the console', async ({
  page,
  browser,
}) => {
  test.setTimeout(60_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);

  // The demo agent's model accepts images: the paper clip is there, with an accessible name.
  const clip = p.getByRole('button', { name: 'Attach an image' });
  await expect(clip).toBeVisible();

  // A type the panel does not send is refused at once, with a reason.
  await attach(p, [{ name: 'dot.gif', mimeType: 'image/gif', buffer: GIF }]);
  await expect(p.locator('.pw-notice')).toHaveText('Only PNG, JPEG and WebP images can be attached.');
  await expect(p.locator('.pw-pending-item')).toHaveCount(0);

  // Two chosen through the paper clip (it opens the browser's file chooser, with no page
  // error), one taken back: one thumbnail waits above the input.
  const chooser = page.waitForEvent('filechooser');
  await clip.click();
  await (await chooser).setFiles([
    { name: 'a.png', mimeType: 'image/png', buffer: PNG },
    { name: 'b.png', mimeType: 'image/png', buffer: PNG },
  ]);
  await expect(p.locator('.pw-pending-item')).toHaveCount(2);
  await p.locator('.pw-pending-item').nth(1).getByRole('button', { name: 'Remove image' }).click();
  await expect(p.locator('.pw-pending-item')).toHaveCount(1);
  await expectLoaded(p.locator('.pw-pending-item img.pw-thumb'), 1);

  // Send it with a word: the sent message shows the image, the demo model says it got one.
  const chat = page.waitForResponse((r) => r.url().endsWith('/api/v1/chat') && r.request().method() === 'POST');
  const input = p.locator('textarea.pw-input');
  await input.fill('Hello');
  await input.press('Enter');
  const conversation = (await chat).headers()['x-parley-conversation'];
  expect(conversation).toBeTruthy();
  await expect(p.locator('.pw-pending-item')).toHaveCount(0);
  const visitor = p.locator('.pw-msg.pw-visitor');
  await expect(visitor).toHaveCount(1);
  await expect(visitor.locator('.pw-bubble')).toHaveText('Hello');
  await expectLoaded(visitor.locator('.pw-images img.pw-thumb'), 1);
  const answer = p.locator('.pw-msg.pw-assistant').nth(1);
  await expect(answer).toHaveAttribute('data-status', 'complete', { timeout: 20_000 });
  await expect(answer.locator('.pw-bubble')).toContainText('I received 1 image.');
  await waitIdle(p);

  // Reload: the transcript brings the image back (fetched with the visitor's token).
  await page.reload();
  await expect(launcher(page)).toBeVisible();
  const q = await openWithLauncher(page);
  const restored = q.locator('.pw-msg.pw-visitor');
  await expect(restored).toHaveCount(1);
  await expect(restored.locator('.pw-bubble')).toHaveText('Hello');
  const thumb = restored.locator('.pw-images img.pw-thumb');
  await expectLoaded(thumb, 1);
  expect(await thumb.getAttribute('src')).toMatch(/^blob:/);
  await expect(q.locator('.pw-msg.pw-assistant').nth(1).locator('.pw-bubble')).toContainText('I received 1 image.');
  expect(errors).toEqual([]);

  // The console shows it in the conversation's transcript.
  const operator = await signIn(browser, OPERATOR);
  await operator.goto(`${APP_URL}/admin/conversations/${conversation}`);
  const image = operator.locator('.c-msg-visitor img.c-image');
  await expectLoaded(image, 1);
  await expect(image).toHaveAttribute('src', /^\/admin\/attachments\//);
  await operator.context().close();
});
