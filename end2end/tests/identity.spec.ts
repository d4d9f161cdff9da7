import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { APP_URL, ask, gotoHost, openWithLauncher, signIn, trackPanelReady, waitForPanel } from './helpers';

/** What the host page's script sees of the loader's API. */
type HostParley = {
  identify(token: string): void;
  logout(): void;
  open(options?: { message?: string }): void;
  on(name: string, handler: (detail: { text?: string }) => void): () => void;
};

declare global {
  interface Window {
    __answers?: string[];
    __sent?: string[];
  }
}

/** A token as the website's backend signs it (HS256, the agent's identity secret). */
function userToken(secret: string, sub: string, name: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = part({ alg: 'HS256', typ: 'JWT' });
  const body = part({ sub, aud: 'demo-help', iat: now, exp: now + 600, name, email: `${sub}@example.com` });
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

/** Listens to the widget's host events (`Parley.on`) on the demo host page. */
async function listen(page: Page): Promise<void> {
  await page.evaluate(() => {
    const parley = (window as unknown as { Parley: HostParley }).Parley;
    window.__answers = [];
    window.__sent = [];
    parley.on('answer', (d) => window.__answers!.push(d.text ?? ''));
    parley.on('message', (d) => window.__sent!.push(d.text ?? ''));
  });
}

test('a signed-in user: identified from the host page, history on a second browser, host events, logout', async ({ browser }) => {
  // The owner makes the agent's identity secret in the console.
  const admin = await signIn(browser);
  await admin.goto(`${APP_URL}/admin/identity`);
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  admin.on('dialog', (d) => d.accept());
  await admin.getByRole('button', { name: /^(Create|Rotate) secret$/ }).click();
  const secret = ((await admin.locator('#new-identity-secret').textContent()) ?? '').trim();
  expect(secret).toMatch(/^pis_/);
  const sub = `e2e-${Date.now()}`;

  // The laptop: the host page identifies its user, then opens the panel with a message.
  const laptop = await (await browser.newContext()).newPage();
  await trackPanelReady(laptop);
  await gotoHost(laptop);
  await listen(laptop);
  await laptop.evaluate((t) => (window as unknown as { Parley: HostParley }).Parley.identify(t), userToken(secret, sub, 'Ada E2E'));
  await laptop.evaluate(() => (window as unknown as { Parley: HostParley }).Parley.open({ message: 'hello from the laptop' }));
  const p = await waitForPanel(laptop);
  await expect(p.locator('.pw-msg.pw-visitor .pw-bubble')).toHaveText(['hello from the laptop']);
  await expect.poll(() => laptop.evaluate(() => window.__answers!.length), { timeout: 15_000 }).toBe(1);
  const [answer] = await laptop.evaluate(() => window.__answers!);
  expect(answer).toMatch(/offline demo model/);
  expect(await laptop.evaluate(() => window.__sent)).toEqual(['hello from the laptop']);

  // The phone: another browser, the same user, sees the conversation.
  const phone = await (await browser.newContext()).newPage();
  await trackPanelReady(phone);
  await gotoHost(phone);
  await phone.evaluate((t) => (window as unknown as { Parley: HostParley }).Parley.identify(t), userToken(secret, sub, 'Ada E2E'));
  const q = await openWithLauncher(phone);
  await expect(q.locator('.pw-msg.pw-visitor .pw-bubble')).toHaveText(['hello from the laptop']);
  await expect(q.locator('.pw-msg.pw-assistant')).toHaveCount(2);
  // The lead form is prefilled with what the website said about its user.
  const escalation = await ask(q, 'Can I talk to a real person?');
  await escalation.locator('button.pw-escalate').click();
  const form = q.locator('form.pw-lead');
  await expect(form.locator('input[name="name"]')).toHaveValue('Ada E2E');
  await expect(form.locator('input[name="email"]')).toHaveValue(`${sub}@example.com`);
  await form.getByRole('button', { name: 'Cancel' }).click();

  // Signing out on the phone starts afresh, also after a reload.
  await phone.evaluate(() => (window as unknown as { Parley: HostParley }).Parley.logout());
  await expect(q.locator('.pw-msg.pw-visitor')).toHaveCount(0);
  await expect(q.locator('.pw-msg.pw-assistant')).toHaveCount(1);
  await phone.reload();
  const fresh = await openWithLauncher(phone);
  await expect(fresh.locator('.pw-msg.pw-visitor')).toHaveCount(0);

  // The console names the user and lists their conversations. (The choice of agent is read by
  // the hydrated page: wait for the console's bundle first, or a busy machine drops it.)
  await admin.goto(`${APP_URL}/admin/identity`);
  await admin.waitForLoadState('networkidle');
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  const row = admin.locator('#identity-users tbody tr').filter({ hasText: sub });
  await expect(row).toContainText('Ada E2E');
  await row.getByRole('link', { name: /Ada E2E/ }).click();
  await expect(admin.locator('#user-filter')).toContainText(sub);
  await expect(admin.locator('#conversations tbody tr')).toHaveCount(1);
  await expect(admin.locator('#conversations tbody tr')).toContainText('Ada E2E');

  // The administrator exports the user's data, then deletes it; the audit log lists both.
  await admin.goto(`${APP_URL}/admin/identity`);
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  const user = admin.locator('#identity-users tbody tr').filter({ hasText: sub });
  const [download] = await Promise.all([admin.waitForEvent('download'), user.getByRole('link', { name: 'Export' }).click()]);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(exported.user.id).toBe(sub);
  expect(JSON.stringify(exported.conversations)).toContain('hello from the laptop');
  await user.getByRole('button', { name: 'Delete' }).click();
  await expect(admin.locator('#identity-users tbody tr').filter({ hasText: sub })).toHaveCount(0);
  await admin.goto(`${APP_URL}/admin/audit?action=person`);
  await expect(admin.locator('#audit tbody tr').first()).toContainText('person.delete');
  await expect(admin.locator('#audit tbody tr').nth(1)).toContainText('person.export');
  await expect(admin.locator('#audit')).not.toContainText(sub);
});
