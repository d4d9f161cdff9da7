import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import {
  APP_URL,
  ask,
  collectErrors,
  gotoHost,
  launcher,
  openWithLauncher,
  panel,
  readyCount,
  signIn,
  trackPanelReady,
} from './helpers';

// Issue 44, part 2: an operator's reply that arrives while the panel is closed shows as an unread
// badge on the launcher — live, on another tab of the same visitor, and after a reload — and
// opening the panel clears it everywhere.

const OPERATOR = { email: 'olive@e2e.test', password: 'e2e-operator-password' };

function badge(page: Page) {
  return launcher(page).locator('.n');
}

test('an operator replies while the panel is closed: the badge shows 1; opening clears it', async ({ page, context, browser }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const question = `Is my order on its way? ${Date.now()}`;
  await ask(p, question);
  await expect(badge(page)).toHaveCount(0);

  // An operator takes the conversation over.
  const op = await signIn(browser, OPERATOR);
  await op.goto(`${APP_URL}/admin/conversations`);
  await op.locator('#conversations tbody tr').filter({ hasText: question.slice(0, 20) }).first().getByRole('link').first().click();
  await op.getByRole('button', { name: 'Take over' }).click();
  await expect(p.locator('.pw-msg').filter({ hasText: 'A person has joined the conversation.' })).toBeVisible();

  // The visitor closes the panel; the operator replies: the badge says 1, and so does the label.
  await launcher(page).click();
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'false');
  await op.getByLabel('Your reply to the visitor').fill('It left our warehouse this morning.');
  await op.getByRole('button', { name: 'Send' }).click();
  await expect(badge(page)).toHaveText('1');
  await expect(launcher(page)).toHaveAttribute('aria-label', /\(1 new\)$/);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // Another tab of the same visitor (a page they open later): the badge is there before any click.
  const other = await context.newPage();
  await trackPanelReady(other);
  await gotoHost(other);
  await expect(badge(other)).toHaveText('1');
  await op.getByLabel('Your reply to the visitor').fill('Tracking number PX-1234.');
  await op.getByRole('button', { name: 'Send' }).click();
  await expect(badge(page)).toHaveText('2');
  await expect(badge(other)).toHaveText('2');

  // Opening the panel on one tab clears the badge on both.
  await launcher(other).click();
  await expect(badge(other)).toHaveCount(0);
  await expect(badge(page)).toHaveCount(0);
  await launcher(other).click();
  await expect(badge(other)).toHaveCount(0);

  // After a reload nothing is unread; the transcript is all there once opened.
  // (The panel loads hidden and follows the conversation: the page never goes network-idle.)
  await page.reload();
  await expect(launcher(page)).toBeVisible();
  await expect.poll(() => readyCount(page)).toBeGreaterThan(0);
  // The hidden panel has the replies, and counts them read.
  await expect(panel(page).locator('.pw-msg.pw-operator')).toHaveCount(2);
  await expect(badge(page)).toHaveCount(0);
  const q = await openWithLauncher(page);
  await expect(q.locator('.pw-msg.pw-operator')).toHaveText([/warehouse/, /PX-1234/]);
  expect(errors).toEqual([]);
});
