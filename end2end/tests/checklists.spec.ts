import { expect, test } from '@playwright/test';
import { APP_URL, signIn } from './helpers';

// The console's lists of checkboxes (one component): webhook events and mail notifications.

test('a webhook endpoint gets exactly the events ticked in its list', async ({ browser }) => {
  const admin = await signIn(browser);
  await admin.goto(`${APP_URL}/admin/webhooks`);
  await admin.waitForLoadState('networkidle');
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  const form = admin.locator('#webhook-add');
  // One box per event (agent.cap_reached, provider.quota_exhausted and the inbox's
  // conversation.assigned and conversation.labeled included).
  await expect(form.getByRole('checkbox')).toHaveCount(12);
  const box = (name: string) => form.getByLabel(name, { exact: true });
  // A public address given as an IP: nothing to resolve on a machine without DNS.
  const url = 'https://1.1.1.1/parley-checklist';
  await form.getByLabel('Address').fill(url);
  await box('lead.created').check();
  await box('order.paid').check();
  await box('lead.created').uncheck();
  await box('conversation.closed').check();
  await expect(box('lead.created')).not.toBeChecked();
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  const card = admin.locator('section.c-webhook', { hasText: url });
  await expect(card).toContainText('Events: order.paid, conversation.closed');
  // The form starts over for the next endpoint.
  await expect(box('order.paid')).not.toBeChecked();
  // Other tests share this server: no endpoint is left behind.
  admin.once('dialog', (d) => d.accept());
  await card.getByRole('button', { name: 'Delete' }).click();
  await expect(card).toHaveCount(0);
  await admin.context().close();
});

test('the mail notification boxes are labelled and can be chosen (the test server has SMTP)', async ({ browser }) => {
  const admin = await signIn(browser);
  await admin.goto(`${APP_URL}/admin/account`);
  const form = admin.locator('#mail-me');
  await expect(form.getByRole('checkbox')).toHaveCount(4);
  await expect(form).not.toContainText('Email is not set up on this server');
  for (const label of ['A visitor waits for a person', 'A new lead', 'An order is paid', 'The daily summary']) {
    await expect(form.getByLabel(label, { exact: true })).toBeEnabled();
  }
  await admin.context().close();
});
