import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { APP_URL, collectErrors, signIn } from './helpers';

// Issue 45, part 3: an owner changes an agent's instructions in a draft (the live agent keeps
// its version), sees the difference marked, publishes, and restores the earlier version.

test('a draft prompt: compared, published, then the earlier version restored', async ({ browser }) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  const key = `versions-${Date.now()}`;
  await admin.goto(`${APP_URL}/admin/agents/new`);
  await admin.getByLabel('Name', { exact: true }).fill('Versions test');
  await admin.getByLabel('Public key (in the embed snippet)').fill(key);
  await admin.getByLabel('System prompt').fill('You help with orders.');
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin).toHaveURL(/\/admin\/agents\/[0-9a-f-]+$/);
  await admin.getByRole('link', { name: 'Versions and draft' }).click();
  await expect(admin.getByRole('heading', { name: 'Versions: Versions test' })).toBeVisible();
  await expect(admin.locator('#v-history > li')).toHaveCount(1);

  // The draft: saved, compared with the published version; visitors keep version 1.
  await admin.getByLabel('System prompt').fill('You help with orders.\nAlways answer in French.');
  await admin.getByRole('button', { name: 'Start a draft' }).click();
  await expect(admin.locator('#v-outcome')).toContainText('Visitors still get version 1');
  const compare = admin.locator('#v-compare');
  await expect(compare.getByRole('heading', { name: 'The draft compared with version 1' })).toBeVisible();
  await expect(compare.locator('ins.c-diff-add')).toHaveText('+ Always answer in French.');
  await expect(admin.getByLabel('System prompt')).toHaveValue('You help with orders.\nAlways answer in French.');
  const axe = await new AxeBuilder({ page: admin }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`)).toEqual([]);

  // Published with a note: version 2 is live, the draft gone.
  await admin.getByLabel('What changed and why (optional, kept in the history)').fill('French customers');
  await admin.getByRole('button', { name: 'Publish the draft' }).click();
  await expect(admin.locator('#v-outcome')).toHaveText('Published version 2: visitors get it now.');
  await expect(admin.locator('#v-compare')).toHaveCount(0);
  const v2 = admin.locator('#v-2');
  await expect(v2).toContainText('published');
  await expect(v2).toContainText('French customers');
  await v2.getByText('What version 2 changed').click();
  await expect(v2.locator('ins.c-diff-add')).toHaveText('+ Always answer in French.');

  // Restore version 1: version 3, with version 1's instructions exactly.
  await admin.getByRole('button', { name: 'Restore version 1' }).click();
  await expect(admin.locator('#v-outcome')).toHaveText('Published version 3: visitors get it now.');
  await expect(admin.locator('#v-3')).toContainText('Restored version 1');
  await expect(admin.getByLabel('System prompt')).toHaveValue('You help with orders.');
  await admin.getByRole('link', { name: '← Agent' }).click();
  await expect(admin.getByLabel('System prompt')).toHaveValue('You help with orders.');
  expect(errors).toEqual([]);
  await admin.context().close();
});
