import { expect, test } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

// The operators playwright.config.ts makes before the server starts.
const OPERATOR = { email: 'olive@e2e.test', password: 'e2e-operator-password' };
const OSCAR = { email: 'oscar@e2e.test', password: 'e2e-oscar-password' };

// Issue 43: two operators in two browsers on one server. Olive assigns a conversation to Oscar;
// Oscar's console counts it in the tab title and lists it; his note mentions Olive, whose console
// counts that; the visitor never sees the note.
test('an assignment and a mention reach the other operator live; a note never reaches the visitor', async ({
  page,
  browser,
}) => {
  test.setTimeout(120_000);
  const olive = await signIn(browser, OPERATOR);
  const oscar = await signIn(browser, OSCAR);
  const errors = [...collectErrors(olive), ...collectErrors(oscar)];
  // Each starts with nothing unread.
  for (const who of [olive, oscar]) {
    await who.getByRole('link', { name: 'Notifications', exact: true }).click();
    if (await who.getByRole('button', { name: 'Mark all read' }).isEnabled()) {
      await who.getByRole('button', { name: 'Mark all read' }).click();
    }
    await expect(who.getByRole('heading', { name: 'Unread (0)' })).toBeVisible();
  }

  // A visitor asks for a person.
  const stamp = Date.now();
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const answer = await ask(p, `Can I talk to a real person about order ${stamp}?`);
  await answer.locator('button.pw-escalate').click();
  const form = p.locator('form.pw-lead');
  await form.locator('input[name="name"]').fill(`Team test ${stamp}`);
  await form.locator('input[name="email"]').fill('team@example.com');
  await form.locator('textarea[name="message"]').fill('Please call me.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);

  // Olive opens it and assigns it to Oscar.
  await olive.getByRole('link', { name: 'Conversations', exact: true }).click();
  const row = olive.locator('#conversations tbody tr').first();
  await expect(row).toContainText('lead');
  await row.getByRole('link').first().click();
  const oscarOption = olive.locator('#assignee option').filter({ hasText: /^Oscar · / });
  await expect(oscarOption).toHaveCount(1);
  await olive.locator('#assignee').selectOption({ value: (await oscarOption.getAttribute('value'))! });
  await expect(olive.locator('#assignee')).toHaveValue((await oscarOption.getAttribute('value'))!);

  // Oscar's tab counts it without a reload, and his list names it.
  await expect(oscar).toHaveTitle(/^\(\d+\) /);
  await oscar.reload();
  const assigned = oscar.getByRole('link', { name: 'Assigned to you' });
  await expect(assigned).toHaveCount(1);
  await assigned.click();
  await expect(oscar.locator('#assignee')).toBeVisible();
  // The `@` menu completes the colleague's name.
  const note = `@Olive please check order ${stamp}`;
  const box = oscar.getByLabel('Add a note');
  await box.pressSequentially('@ol');
  await oscar.getByRole('group', { name: 'Mention a colleague' }).getByRole('button', { name: '@Olive' }).click();
  await expect(box).toHaveValue('@Olive ');
  await expect(box).toBeFocused();
  await box.pressSequentially(`please check order ${stamp}`);
  await oscar.getByRole('button', { name: 'Add note' }).click();
  await expect(oscar.locator('.c-inbox')).toContainText(note);

  // Olive's tab counts the mention; her list names it.
  await expect(olive).toHaveTitle(/^\(\d+\) /);
  await olive.getByRole('link', { name: 'Notifications', exact: true }).click();
  await expect(olive.getByRole('link', { name: 'You were mentioned in a note' })).toHaveCount(1);
  const axe = await new AxeBuilder({ page: olive }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

  // The visitor's panel never shows the note, even after a reload.
  await page.reload();
  const again = await openWithLauncher(page);
  await expect(again.locator('.pw-msg').first()).toBeVisible();
  await expect(again.getByText(`please check order ${stamp}`)).toHaveCount(0);
  expect(errors).toEqual([]);
  await olive.context().close();
  await oscar.context().close();
});
