import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { APP_URL, collectErrors, signIn } from './helpers';

// Issue 44, part 3: a pre-chat form per agent. The owner chooses its fields in the agent form;
// the visitor fills it in before the first message (the composer waits for it), and the model
// reads the answers as a tool result.

test('a pre-chat form: chosen by the owner, filled in before the first message', async ({ browser }) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  const adminErrors = collectErrors(admin);
  const key = `prechat-${Date.now()}`;
  await admin.goto(`${APP_URL}/admin/agents/new`);
  await expect(admin.getByRole('heading', { name: 'New agent' })).toBeVisible();
  await admin.getByLabel('Name', { exact: true }).fill('Pre-chat test');
  await admin.getByLabel('Public key (in the embed snippet)').fill(key);
  await admin.getByLabel('Allowed origins (one per line; none: no website can embed it yet; * for any)').fill('*');
  await admin.getByLabel('Pre-chat form: title').fill('Before we start');
  await admin.getByLabel('Pre-chat form: name').selectOption('required');
  await admin.getByLabel('Pre-chat form: email').selectOption('optional');
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin).toHaveURL(/\/admin\/agents\/[0-9a-f-]+$/);
  await expect(admin.getByLabel('Pre-chat form: name')).toHaveValue('required');
  await expect(admin.getByLabel('Pre-chat form: phone')).toHaveValue('off');
  expect(adminErrors).toEqual([]);

  const page = await (await browser.newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(`${APP_URL}/embed/${key}`);
  const form = page.getByRole('form', { name: 'Before we start' });
  await expect(form).toBeVisible();
  await expect(form.getByLabel('Name')).toBeVisible();
  await expect(form.getByLabel('Phone')).toHaveCount(0);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // The composer waits for the form.
  await page.locator('textarea.pw-input').fill('Hello?');
  await page.locator('button.pw-send').click();
  await expect(page.locator('.pw-notice[role="status"]')).toHaveText('Please fill in the form above first.');
  await expect(page.locator('.pw-msg.pw-visitor')).toHaveCount(0);

  // The form's own checks, then the answers start the conversation.
  await form.getByRole('button', { name: 'Send' }).click();
  await expect(form.locator('[data-f="name"]')).toHaveText('Please fill this in.');
  await form.getByLabel('Name').fill('Ann');
  await form.getByLabel('Email').fill('ann@example.com');
  await form.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('.pw-msg.pw-visitor .pw-bubble')).toContainText('Name: Ann');
  const answer = page.locator('.pw-msg.pw-assistant').last();
  await expect(answer).toHaveAttribute('data-status', 'complete', { timeout: 30_000 });
  await expect(answer.locator('.pw-bubble')).toContainText('Thank you! I have your details');
  await expect(form).toBeHidden();
  // Then the composer sends as usual.
  await page.locator('textarea.pw-input').fill('And my order?');
  await page.locator('button.pw-send').click();
  await expect(page.locator('.pw-msg.pw-visitor .pw-bubble').last()).toHaveText('And my order?');
  await expect(page.locator('.pw-msg.pw-assistant').last()).toHaveAttribute('data-status', 'complete', {
    timeout: 30_000,
  });

  // A person closes the conversation: the next message starts a new one, with the form first
  // (what was typed stays in the box).
  const conversation = await page.evaluate((k) => localStorage.getItem(`parley:v1:${k}:conversation`), key);
  await admin.goto(`${APP_URL}/admin/conversations/${conversation}`);
  admin.once('dialog', (d) => d.accept());
  await admin.getByRole('button', { name: 'Close', exact: true }).click();
  await expect(page.locator('.pw-msg.pw-system').last()).toBeVisible({ timeout: 15_000 });
  await page.locator('textarea.pw-input').fill('Back again');
  await page.locator('button.pw-send').click();
  await expect(page.locator('.pw-notice[role="status"]')).toHaveText('Please fill in the form above first.');
  await expect(form).toBeVisible();
  await expect(page.locator('textarea.pw-input')).toHaveValue('Back again');
  await form.getByLabel('Name').fill('Ann');
  await form.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('.pw-msg.pw-visitor .pw-bubble')).toContainText('Name: Ann');
  await expect
    .poll(() => page.evaluate((k) => localStorage.getItem(`parley:v1:${k}:conversation`), key))
    .not.toBe(conversation);
  expect(errors).toEqual([]);
  await admin.context().close();
  await page.context().close();
});
