import { expect, test, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { ask, collectErrors, gotoHost, openWithLauncher, panel, send, signIn, trackPanelReady } from './helpers';

/** A new visitor (own browser context) who asks `question`; their page stays open. */
async function visitorAsks(browser: import('@playwright/test').Browser, question: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await trackPanelReady(page);
  await gotoHost(page);
  await ask(await openWithLauncher(page), question);
  return page;
}

async function seriousViolations(page: Page) {
  const axe = await new AxeBuilder({ page }).analyze();
  return axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent ?? '');

// Issue 43: operators work the inbox from the keyboard; the shortcuts are listed and optional.
test('j and k move through the list, Enter opens, r replies, e closes, ? lists them and turns them off', async ({ browser }) => {
  test.setTimeout(90_000);
  const stamp = Date.now();
  const visitors = [await visitorAsks(browser, `First key question ${stamp}?`), await visitorAsks(browser, `Second key question ${stamp}?`)];
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  await admin.getByRole('link', { name: 'Conversations', exact: true }).click();
  const links = admin.locator('#conversations tbody tr td:first-child a');
  await expect(links.nth(1)).toBeVisible();
  const first = (await links.nth(0).textContent()) ?? '';
  const second = (await links.nth(1).textContent()) ?? '';

  await admin.keyboard.press('j');
  expect(await focusedText(admin)).toBe(first);
  await admin.keyboard.press('j');
  expect(await focusedText(admin)).toBe(second);
  await admin.keyboard.press('k');
  expect(await focusedText(admin)).toBe(first);

  // `?` lists the shortcuts (announced on its button), and Escape closes the list.
  await expect(admin.locator('#shortcuts-button')).toHaveAttribute('aria-keyshortcuts', '?');
  await admin.keyboard.press('?');
  const list = admin.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(list).toBeVisible();
  await expect(list).toContainText('Next conversation in the list');
  expect(await seriousViolations(admin)).toEqual([]);
  await admin.keyboard.press('Escape');
  await expect(list).toHaveCount(0);

  // Enter opens the focused conversation; r goes to "Take over", then to the reply box, where
  // letters are typed, not taken.
  // (Its own conversation: in the full suite the newest one may be another spec's.)
  await admin.locator('#conversations tbody tr', { hasText: `Second key question ${stamp}` }).locator('td:first-child a').focus();
  await admin.keyboard.press('Enter');
  await expect(admin.locator('#claim')).toBeVisible();
  await admin.keyboard.press('r');
  await expect(admin.locator('#claim')).toBeFocused();
  await admin.keyboard.press('Enter');
  const box = admin.getByLabel('Your reply to the visitor');
  await expect(box).toBeVisible();
  await admin.locator('h1').click();
  await admin.keyboard.press('r');
  await expect(box).toBeFocused();
  await admin.keyboard.type('jerk');
  await expect(box).toHaveValue('jerk');
  // e closes the conversation, after its confirmation (asked for once the reply box lost focus).
  await box.blur();
  await expect(box).not.toBeFocused();
  // (Accepted by a listener set first: the confirmation blocks the key press until answered.)
  admin.once('dialog', (d) => d.accept());
  await admin.keyboard.press('e');
  await expect(admin.locator('.c-conv-head')).toContainText('closed');

  // Turned off in the list, the single keys do nothing (and stay off after a reload); `?` still
  // opens the list to turn them on again.
  await admin.keyboard.press('?');
  await admin.locator('#shortcuts-on').uncheck();
  await admin.keyboard.press('Escape');
  await admin.getByRole('link', { name: 'Conversations', exact: true }).click();
  await expect(links.first()).toBeVisible();
  await admin.reload();
  await expect(links.first()).toBeVisible();
  await admin.keyboard.press('j');
  expect(await admin.evaluate(() => document.activeElement?.tagName)).toBe('BODY');
  await admin.keyboard.press('?');
  await expect(admin.locator('#shortcuts-on')).not.toBeChecked();
  expect(errors).toEqual([]);
  for (const v of visitors) await v.context().close();
  await admin.context().close();
});

// Any event of the conversation (a visitor's message, a colleague's note, an assignment, the
// copilot's summary) draws it anew: what the operator was typing, and where, must survive it, or
// the next keys land on the page as shortcuts (two CI failures came from that timing).
test('a conversation that reloads while the operator types keeps the reply, the note and the focus', async ({ browser }) => {
  test.setTimeout(90_000);
  const stamp = Date.now();
  const visitor = await visitorAsks(browser, `Reload while typing ${stamp}?`);
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  await admin.getByRole('link', { name: 'Conversations', exact: true }).click();
  await admin.locator('#conversations tbody tr', { hasText: `Reload while typing ${stamp}` }).locator('td:first-child a').click();
  await admin.locator('#claim').click();
  const box = admin.getByLabel('Your reply to the visitor');
  await box.click();
  await admin.keyboard.type('Half a rep');
  // The visitor writes while the operator goes on typing: the conversation is brought up to
  // date under their hands, and no key is lost (keys typed across the update were, when the
  // page was drawn anew).
  const typing = admin.keyboard.type('ly, typed while the visitor writes', { delay: 50 });
  await send(panel(visitor), `And one more thing ${stamp}`);
  await expect(admin.locator('.c-transcript')).toContainText(`And one more thing ${stamp}`);
  await typing;
  await admin.keyboard.type('!');
  await expect(box).toHaveValue('Half a reply, typed while the visitor writes!');
  await expect(box).toBeFocused();
  // The same for a private note, with the caret in the middle of it.
  const note = admin.getByLabel('Add a note');
  await note.click();
  await admin.keyboard.type('Check the voice');
  for (let i = 0; i < 'voice'.length; i++) await admin.keyboard.press('ArrowLeft');
  const noting = admin.keyboard.type('in', { delay: 400 });
  await send(panel(visitor), `And the last thing ${stamp}`);
  await expect(admin.locator('.c-transcript')).toContainText(`And the last thing ${stamp}`);
  await noting;
  await expect(note).toHaveValue('Check the invoice');
  await expect(note).toBeFocused();
  expect(errors).toEqual([]);
  await visitor.context().close();
  await admin.context().close();
});

// Issue 43, part 8: the inbox, a conversation and the reply box at a phone's width.
test('at 390 px the inbox, a conversation and the reply box fit and pass axe', async ({ browser }) => {
  test.setTimeout(90_000);
  const question = `A phone-width question ${Date.now()}?`;
  const visitor = await visitorAsks(browser, question);
  // Signed in as usual, then narrowed to a phone.
  const admin = await signIn(browser);
  await admin.setViewportSize({ width: 390, height: 844 });
  const errors = collectErrors(admin);
  // Nothing sticks out sideways (a wide table scrolls in its own box); the offenders are named.
  const fits = () =>
    admin.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.c-scroll'))
        .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${[...e.classList].join('.')}`),
    );
  await admin.goto(admin.url().replace(/\/admin.*$/, '/admin/conversations'));
  // One worker runs the specs one by one: the newest conversation is this visitor's.
  const row = admin.locator('#conversations tbody tr').first();
  await expect(row).toBeVisible();
  expect(await fits()).toEqual([]);
  expect(await seriousViolations(admin)).toEqual([]);
  await row.getByRole('link').first().click();
  await admin.getByRole('button', { name: 'Take over' }).click();
  await expect(admin.getByLabel('Your reply to the visitor')).toBeVisible();
  expect(await fits()).toEqual([]);
  expect(await seriousViolations(admin)).toEqual([]);
  const send = await admin.getByRole('button', { name: 'Send' }).boundingBox();
  expect(send!.x + send!.width).toBeLessThanOrEqual(390);
  expect(errors).toEqual([]);
  await visitor.context().close();
  await admin.context().close();
});
