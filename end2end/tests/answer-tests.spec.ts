import AxeBuilder from '@axe-core/playwright';
import { expect, Page, test } from '@playwright/test';
import { APP_URL, collectErrors, signIn } from './helpers';

// Issue 45, part 2: an owner keeps answer tests for an agent (the offline demo model answers),
// runs them on the published version, edits a draft and tries it, runs them on the draft, sees
// one case turn red with the difference marked, publishes anyway, then restores the previous version.

async function axeClean(page: Page) {
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`)).toEqual([]);
}

async function addCase(page: Page, name: string, message: string, kind: string, value?: string) {
  await page.getByRole('button', { name: 'Add a test case' }).click();
  const editor = page.locator('#t-editor');
  await editor.getByLabel('Name').fill(name);
  await editor.getByLabel("The visitor's messages, one a line (the checks look at the answer to the last)").fill(message);
  await editor.getByLabel('Check 1', { exact: true }).selectOption(kind);
  if (value !== undefined) await editor.getByLabel('Check 1: value').fill(value);
  await editor.getByRole('button', { name: 'Save the test case' }).click();
  await expect(page.locator('#t-outcome')).toHaveText(`Saved “${name}”.`);
}

/** Waits for the newest run to end; its list item. */
async function newestRunDone(page: Page) {
  const run = page.locator('#t-runs > li').first();
  await expect(run).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  return run;
}

test('answer tests: run, a draft turns a case red, publish anyway, restore', async ({ browser }) => {
  test.setTimeout(120_000);
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  const key = `tests-${Date.now()}`;
  await admin.goto(`${APP_URL}/admin/agents/new`);
  await admin.getByLabel('Name', { exact: true }).fill('Tests agent');
  await admin.getByLabel('Public key (in the embed snippet)').fill(key);
  await admin.getByLabel('System prompt').fill('You help with orders.');
  await admin.getByLabel('ticket_escalation').check();
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin).toHaveURL(/\/admin\/agents\/[0-9a-f-]+$/);
  await admin.getByRole('link', { name: 'Answer tests' }).click();
  await expect(admin.getByRole('heading', { name: 'Answer tests: Tests agent' })).toBeVisible();

  // A case with a wrong field is refused and says why.
  await admin.getByRole('button', { name: 'Add a test case' }).click();
  await admin.locator('#t-editor').getByRole('button', { name: 'Save the test case' }).click();
  await expect(admin.locator('#t-outcome')).toHaveText('Please correct the fields marked below.');
  await expect(admin.locator('#err-name')).toContainText('1 to 100 characters');
  await admin.locator('#t-editor').getByRole('button', { name: 'Cancel' }).click();

  await addCase(admin, 'Greets', 'Hello', 'contains', 'offline demo model');
  await addCase(admin, 'Hand-over', 'I want to talk to a person', 'hands_over');
  await expect(admin.locator('#t-cases > li')).toHaveCount(2);
  await axeClean(admin);

  // Run on the published version: both pass.
  await admin.getByRole('button', { name: 'Run on version 1' }).click();
  await expect(admin.locator('#t-outcome')).toContainText('The run started');
  let run = await newestRunDone(admin);
  await expect(run).toContainText('2 of 2 passed');

  // A draft: another line of instructions, and no more hand-over to a person.
  await admin.getByRole('link', { name: 'Versions and draft' }).click();
  await expect(admin.getByRole('heading', { name: 'Versions: Tests agent' })).toBeVisible();
  await admin.getByLabel('System prompt').fill('You help with orders.\nNever hand over to a person.');
  await admin.getByLabel('ticket_escalation').uncheck();
  await admin.getByRole('button', { name: 'Start a draft' }).click();
  await expect(admin.locator('#v-outcome')).toContainText('Visitors still get version 1');
  // Try the draft: it no longer offers a person.
  const tryIt = admin.locator('#v-try');
  await expect(tryIt.getByLabel('Talk to')).toHaveValue('draft');
  await tryIt.getByLabel('Message').fill('I want to talk to a person');
  await tryIt.getByRole('button', { name: 'Send' }).click();
  await expect(tryIt.locator('#v-try-log > li')).toHaveCount(1);
  await expect(tryIt.locator('#v-try-log .c-answer')).toContainText('Offline demo model');
  await expect(tryIt.locator('#v-try-log')).not.toContainText('offered a person');
  await axeClean(admin);
  await tryIt.getByRole('button', { name: 'Start over' }).click();
  await expect(tryIt.locator('#v-try-log > li')).toHaveCount(0);
  await admin.getByRole('link', { name: 'Answer tests' }).click();

  // Run on the draft: the hand-over case turns red.
  await admin.getByRole('button', { name: 'Run on the draft' }).click();
  run = await newestRunDone(admin);
  await expect(run).toContainText('the draft (from version 1)');
  await expect(run).toContainText('1 of 2 passed');
  await run.getByRole('link', { name: 'Results' }).click();
  await expect(admin.locator('#t-run')).toHaveAttribute('data-status', 'done');
  await expect(admin.locator('#t-summary')).toContainText('1 of 2 passed');
  const person = admin.locator('#t-results > li', { hasText: 'Hand-over' });
  await expect(person).toHaveAttribute('data-passed', 'false');
  await expect(person.locator('h3 .c-badge')).toHaveText('FAIL');
  await expect(person.locator('h3 mark.c-turned')).toHaveText('passed before, fails now');
  await expect(person.locator('.c-checks li')).toHaveCount(1);
  await expect(person.locator('.c-checks li')).toContainText('offers a person — failed');
  await expect(person.locator('.c-checks mark.c-turned')).toHaveText('passed before');
  await expect(person.locator('del.c-diff-del').filter({ hasText: "I've let our team know." })).toHaveCount(1);
  await expect(person.locator('ins.c-diff-add').filter({ hasText: 'Offline demo model' })).toHaveCount(1);
  const greets = admin.locator('#t-results > li', { hasText: 'Greets' });
  await expect(greets).toHaveAttribute('data-passed', 'true');
  await axeClean(admin);

  // Publish anyway, then restore version 1.
  await admin.getByRole('link', { name: '← Answer tests' }).click();
  await admin.getByRole('link', { name: 'Versions and draft' }).click();
  await admin.getByRole('button', { name: 'Publish the draft' }).click();
  await expect(admin.locator('#v-outcome')).toHaveText('Published version 2: visitors get it now.');
  await admin.getByRole('button', { name: 'Restore version 1' }).click();
  await expect(admin.locator('#v-outcome')).toHaveText('Published version 3: visitors get it now.');
  await expect(admin.getByLabel('ticket_escalation')).toBeChecked();
  await admin.getByRole('link', { name: 'Answer tests' }).click();
  await admin.getByRole('button', { name: 'Run on version 3' }).click();
  run = await newestRunDone(admin);
  await expect(run).toContainText('2 of 2 passed');
  expect(errors).toEqual([]);
  await admin.context().close();
});
