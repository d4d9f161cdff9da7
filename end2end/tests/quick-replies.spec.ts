import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { APP_URL, ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

// Issue 44, part 3: quick replies. The offline demo model offers topics through the built-in
// `offer_quick_replies`; a tap is sent as the visitor's message and the buttons go.

test('quick replies: a tap sends the reply, the buttons go, and the console shows them', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const answer = await ask(p, `What can you help me with? ${Date.now()}`);
  const group = answer.getByRole('group', { name: 'Quick replies' });
  await expect(group.getByRole('button')).toHaveText(['Opening hours', 'Shipping', 'Talk to a person']);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // A tap sends its text as the visitor's message; the answer's buttons go.
  await group.getByRole('button', { name: 'Talk to a person' }).click();
  const visitors = p.locator('.pw-msg.pw-visitor .pw-bubble');
  await expect(visitors.last()).toHaveText('Talk to a person');
  await expect(group).toBeHidden();
  const next = p.locator('.pw-msg.pw-assistant').last();
  await expect(next).toHaveAttribute('data-status', 'complete');
  await expect(next.locator('button.pw-escalate')).toBeVisible();

  // After a reload the transcript comes back without live buttons on the old answer.
  await page.reload();
  const q = await openWithLauncher(page);
  await expect(q.locator('.pw-msg.pw-visitor .pw-bubble').last()).toHaveText('Talk to a person');
  await expect(q.locator('.pw-quick')).toHaveCount(1);
  await expect(q.locator('.pw-quick')).toBeHidden();
  expect(errors).toEqual([]);

  // The console's transcript shows the replies that were offered.
  const admin = await signIn(browser);
  await admin.goto(`${APP_URL}/admin/conversations`);
  await admin.locator('#conversations tbody tr').first().locator('a').first().click();
  await expect(admin.locator('.pw-quick .pw-reply')).toHaveText(['Opening hours', 'Shipping', 'Talk to a person']);
});
