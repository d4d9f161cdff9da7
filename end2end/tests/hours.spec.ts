import { expect, test, type Page } from '@playwright/test';
import { APP_URL, ask, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

const ADMIN = { email: 'admin@e2e.test', password: 'e2e-admin-password' };
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

async function hoursPage(admin: Page): Promise<void> {
  await admin.goto(`${APP_URL}/admin/hours`);
  await admin.waitForLoadState('networkidle');
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
}

test('outside business hours the panel says when people are back and offers to leave a message', async ({ page, browser }) => {
  test.setTimeout(60_000);
  const admin = await signIn(browser, ADMIN);
  await hoursPage(admin);
  // Open one hour a day, two hours from now (UTC): closed now, back then.
  const from = (new Date().getUTCHours() + 2) % 24;
  const pad = (n: number) => String(n).padStart(2, '0');
  const range = `${pad(from)}:00-${pad(from + 1)}:00`;
  try {
    await admin.getByLabel(/^Time zone/).fill('UTC');
    for (const day of DAYS) await admin.getByLabel(day, { exact: true }).fill(range);
    await admin.getByRole('button', { name: 'Save hours' }).click();
    await expect(admin.locator('#hours-now')).toContainText('Closed now; back');

    await trackPanelReady(page);
    await gotoHost(page);
    const p = await openWithLauncher(page);
    await expect(p.locator('.pw-away')).toContainText("Our team is away. Leave a message and we'll answer when we're back:");
    const answer = await ask(p, 'Can I talk to a real person?');
    const button = answer.locator('button.pw-escalate');
    await expect(button).toHaveText('Leave a message');
    await button.click();
    await expect(p.locator('form.pw-lead h3')).toHaveText('Leave a message');
  } finally {
    // The other tests share this server: people are reachable again.
    await hoursPage(admin);
    // The form shows once the agent's hours have loaded; the button only when some are set.
    await expect(admin.locator('#hours-now')).toBeVisible();
    const remove = admin.getByRole('button', { name: 'Remove hours (always reachable)' });
    if (await remove.count()) await remove.click();
    await expect(admin.locator('#hours-now')).toContainText('No business hours');
    await admin.context().close();
  }
});
