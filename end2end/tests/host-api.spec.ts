import { expect, test, type Page } from '@playwright/test';
import {
  APP_URL,
  GREETING,
  collectErrors,
  gotoHost,
  iframe,
  launcher,
  openWithLauncher,
  panel,
  panelBox,
  send,
  trackPanelReady,
  waitForPanel,
  waitIdle,
} from './helpers';

const OPEN = /(^|\s)o(\s|$)/;
const CONVERSATION_KEY = 'parley:v1:demo-help:conversation';

/** The conversation id the panel keeps in the iframe's localStorage. */
async function storedConversation(page: Page): Promise<string | null> {
  const frame = page.frames().find((f) => f.url().startsWith(`${APP_URL}/embed/demo-help`));
  if (!frame) throw new Error('no panel frame');
  return frame.evaluate((key) => localStorage.getItem(key), CONVERSATION_KEY);
}

test('Parley.open() / Parley.close() from the host page and the panel close button', async ({ page }) => {
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const box = panelBox(page);
  await expect(box).not.toHaveClass(OPEN);
  await expect(box).toBeHidden();

  // Parley.open() from the host page's own script.
  await page.getByRole('button', { name: 'Parley.open()' }).click();
  await waitForPanel(page);
  await expect(box).toBeVisible();
  await expect(iframe(page)).toBeVisible();
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'true');

  // Parley.close()
  await page.getByRole('button', { name: 'Parley.close()' }).click();
  await expect(box).not.toHaveClass(OPEN);
  await expect(box).toBeHidden();
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'false');

  // Parley.open() again (the iframe is kept, not loaded twice).
  await page.evaluate(() => (window as unknown as { Parley: { open(): void } }).Parley.open());
  await expect(box).toHaveClass(OPEN);
  await expect(box).toBeVisible();
  await expect(iframe(page)).toHaveCount(1);

  // The panel's close button posts parley:close to the host, which closes it.
  await panel(page).getByRole('button', { name: 'Close chat' }).click();
  await expect(box).not.toHaveClass(OPEN);
  await expect(box).toBeHidden();
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'false');

  // And the launcher opens it again.
  await launcher(page).click();
  await expect(box).toHaveClass(OPEN);
  await expect(panel(page).locator('.pw-panel')).toBeVisible();
  expect(errors).toEqual([]);
});

test('Parley.reset() starts a new conversation; the old one does not come back after a reload', async ({ page }) => {
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  let p = await openWithLauncher(page);
  await send(p, 'Hello');
  const assistants = p.locator('.pw-msg.pw-assistant');
  await expect(assistants).toHaveCount(2);
  await waitIdle(p);
  const old = await storedConversation(page);
  expect(old, 'conversation id stored in the iframe').toBeTruthy();

  // Parley.reset() (host page → postMessage → panel).
  await page.getByRole('button', { name: 'Parley.reset()' }).click();
  await expect(p.locator('#pw-list > .pw-msg')).toHaveCount(1);
  await expect(assistants.first().locator('.pw-bubble')).toHaveText(GREETING);
  await expect(p.locator('.pw-msg.pw-visitor')).toHaveCount(0);
  await expect.poll(() => storedConversation(page)).toBeNull();

  // Reload: the old conversation must not come back.
  const restoreRequests: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/v1/conversations/')) restoreRequests.push(`${r.method()} ${r.url()}`);
  });
  await page.reload();
  await expect(launcher(page)).toBeVisible();
  p = await openWithLauncher(page);
  await expect(p.locator('#pw-list > .pw-msg')).toHaveCount(1);
  await expect(p.locator('.pw-msg.pw-assistant .pw-bubble')).toHaveText([GREETING]);

  // A new message goes into a new conversation, and still nothing old shows up.
  await send(p, 'Hi, again');
  await expect(p.locator('.pw-msg.pw-assistant')).toHaveCount(2);
  await waitIdle(p);
  await expect(p.locator('.pw-msg.pw-visitor .pw-bubble')).toHaveText(['Hi, again']);
  await expect(p.locator('#pw-list > .pw-msg')).toHaveCount(3);
  const fresh = await storedConversation(page);
  expect(fresh).toBeTruthy();
  expect(fresh).not.toBe(old);
  expect(restoreRequests.filter((r) => r.includes(old!)), 'requests for the old conversation').toEqual([]);
  expect(errors).toEqual([]);
});

test('the panel\'s new-conversation button starts a new conversation too', async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  await send(p, 'Hello');
  await expect(p.locator('.pw-msg.pw-assistant')).toHaveCount(2);
  await waitIdle(p);
  const old = await storedConversation(page);
  expect(old).toBeTruthy();
  await p.getByRole('button', { name: 'New conversation' }).click();
  await expect(p.locator('#pw-list > .pw-msg')).toHaveCount(1);
  await expect.poll(() => storedConversation(page)).toBeNull();
});

test('Parley.reset() called before the panel is opened also starts a new conversation', async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  let p = await openWithLauncher(page);
  await send(p, 'Hello');
  await expect(p.locator('.pw-msg.pw-assistant')).toHaveCount(2);
  await waitIdle(p);
  const old = await storedConversation(page);
  expect(old).toBeTruthy();

  // E.g. the host site's logout handler: the widget has not been opened on this page yet, so the
  // loader queues the reset until the panel says it is ready.
  await page.reload();
  await expect(launcher(page)).toBeVisible();
  await page.evaluate(() => (window as unknown as { Parley: { reset(): void } }).Parley.reset());
  p = await openWithLauncher(page);
  await expect.poll(() => storedConversation(page)).toBeNull();

  const question = 'What are your opening hours?';
  await send(p, question);
  const last = p.locator('.pw-msg.pw-assistant').last();
  await expect(last.locator('.pw-bubble')).toContainText(question);
  await expect(last).toHaveAttribute('data-status', 'complete');
  await waitIdle(p);
  const fresh = await storedConversation(page);
  expect.soft(fresh, 'the next message went into a new conversation, not the old one').not.toBe(old);
  await expect.soft(p.locator('.pw-msg.pw-visitor .pw-bubble'), 'only the new message is shown').toHaveText([question], {
    timeout: 1_000,
  });
});
