import { expect, test } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

// The operator's copilot (issue 43, part 7) with the offline demo model: a hand-over summary at the
// top of the conversation, and drafts in the reply box that are sent only when the operator sends.
test('the copilot summarises a hand-over and drafts in the reply box; nothing is sent until Send', async ({
  page,
  browser,
}) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const stamp = Date.now();
  const question = `Where is my parcel ${stamp}?`;
  await ask(p, question);
  const answer = await ask(p, 'Can I talk to a real person?');
  await answer.locator('button.pw-escalate').click();
  const form = p.locator('form.pw-lead');
  await form.locator('input[name="name"]').fill(`Grace ${stamp}`);
  await form.locator('input[name="email"]').fill('grace@example.com');
  await form.locator('textarea[name="message"]').fill('Please call me back.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);

  const admin = await signIn(browser);
  const adminErrors = collectErrors(admin);
  await admin.getByRole('link', { name: 'Conversations', exact: true }).click();
  // One worker runs the specs one by one: the newest conversation is this visitor's (the summary
  // below names them).
  const row = admin.locator('#conversations tbody tr').first();
  await expect(row).toContainText('lead');
  await row.getByRole('link').first().click();
  // The summary was written when the visitor left their details; the demo model says what it did.
  const summary = admin.locator('#handoff-summary');
  await expect(summary.locator('.c-summary-text')).toContainText(question);
  await expect(summary.locator('.c-summary-text')).toContainText(`Left their contact details as Grace ${stamp}`);
  await expect(summary).toContainText('not a real summary');

  await admin.getByRole('button', { name: 'Take over' }).click();
  const box = admin.getByLabel('Your reply to the visitor');
  await box.fill('sorry   for the wait. your parcel left today');
  await admin.getByRole('button', { name: 'Improve' }).click();
  await expect(box).toHaveValue('Sorry for the wait. Your parcel left today.');
  await expect(admin.locator('.c-copilot')).toContainText('it only tidies spaces and capitals');
  await admin.getByRole('button', { name: 'Shorten' }).click();
  await expect(box).toHaveValue('Sorry for the wait.');
  // A draft is only a draft: the visitor has seen nothing from the operator yet.
  await expect(p.locator('.pw-msg.pw-operator').filter({ hasText: 'Sorry for the wait' })).toHaveCount(0);
  const axe = await new AxeBuilder({ page: admin }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

  await admin.getByRole('button', { name: 'Send' }).click();
  await expect(p.locator('.pw-msg.pw-operator').filter({ hasText: 'Sorry for the wait.' })).toBeVisible();
  expect(errors).toEqual([]);
  expect(adminErrors).toEqual([]);
  await admin.context().close();
});
