import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { APP_URL, ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

// Issue 44, part 3: forms. The offline demo model asks for a call's details with the built-in
// `ask_form`; the panel checks the answers (the server checks again) and sends them; the model
// reads them as a tool result (its answer lists them back) and the console shows them.

test('a form: checked in the panel, sent, answered, and shown in the console', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const stamp = Date.now();
  const answer = await ask(p, `Can you book a call for me? ${stamp}`);
  const form = answer.getByRole('form', { name: 'Book a call' });
  await expect(form).toBeVisible();
  await expect(form.getByLabel('Topic')).toBeVisible();
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // Checked in the panel first: the wrong field is named, marked and focused; nothing is sent.
  const visitors = p.locator('.pw-msg.pw-visitor');
  const before = await visitors.count();
  await form.getByLabel('Your name').fill('Ann');
  await form.getByLabel('Email').fill('ann at example');
  await form.getByRole('button', { name: 'Book the call' }).click();
  await expect(form.locator('[data-f="email"]')).toHaveText('That email address does not look right.');
  await expect(form.getByLabel('Email')).toHaveAttribute('aria-invalid', 'true');
  await expect(form.getByLabel('Email')).toBeFocused();
  await form.getByLabel('Email').fill(`ann.${stamp}@example.com`);
  await form.getByRole('button', { name: 'Book the call' }).click();
  await expect(form.locator('[data-f="topic"]')).toHaveText('Please fill this in.');
  expect(await visitors.count()).toBe(before);

  await form.getByLabel('Topic').selectOption('Support');
  await form.getByLabel('Preferred day').fill('2027-01-15');
  await form.getByRole('button', { name: 'Book the call' }).click();
  await expect(visitors.last().locator('.pw-bubble')).toContainText('Your name: Ann');
  await expect(visitors.last().locator('.pw-bubble')).toContainText('Topic: Support');
  await expect(form).toBeHidden();
  const next = p.locator('.pw-msg.pw-assistant').last();
  await expect(next).toHaveAttribute('data-status', 'complete');
  // The demo model lists what its tool result held.
  await expect(next.locator('.pw-bubble')).toContainText('Thank you! I have your details');
  await expect(next.locator('.pw-bubble')).toContainText('topic: Support');
  expect(errors).toEqual([]);

  // The console's transcript shows the form and the answers sent (the list shows the
  // conversation's last visitor message: the answers).
  const admin = await signIn(browser);
  await admin.goto(`${APP_URL}/admin/conversations`);
  await admin.locator('#conversations tbody tr', { hasText: `ann.${stamp}@example.com` }).locator('td:first-child a').click();
  await expect(admin.locator('.c-transcript .pw-form')).toHaveCount(1);
  const sent = admin.locator('.c-transcript .pw-form-answers');
  await expect(sent).toContainText('Email');
  await expect(sent).toContainText(`ann.${stamp}@example.com`);
  await admin.context().close();
});
