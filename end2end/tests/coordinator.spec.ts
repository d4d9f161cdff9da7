import { expect, test, type Browser, type Page } from '@playwright/test';
import { APP_URL, ZH_SEND, ask, collectErrors, gotoHost, openWithLauncher, trackPanelReady } from './helpers';

// The seeded immigration agent run as a coordinator (seed 003): an administrator ticks
// `expert_team`; the offline demo model then calls the policy expert (which searches the
// knowledge base) and the assessment expert, which the panel shows like tool chips, and ends its
// reply with a <consulting_state> tag the visitor never sees — not even for a moment while the
// answer streams — and the console shows.

const ADMIN = { email: 'admin@e2e.test', password: 'e2e-admin-password' };

async function signIn(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${APP_URL}/admin/login`);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  return page;
}

/** Ticks or unticks `expert_team` on the seeded immigration agent. */
async function setCoordinator(admin: Page, on: boolean): Promise<void> {
  await admin.goto(`${APP_URL}/admin/agents`);
  await admin.getByRole('link', { name: '香港移民顾问' }).click();
  await expect(admin.getByLabel('Name', { exact: true })).toHaveValue('香港移民顾问');
  const box = admin.getByLabel('expert_team', { exact: true });
  if (on) await box.check();
  else await box.uncheck();
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin.getByRole('status')).toBeVisible();
  await admin.reload();
  if (on) await expect(admin.getByLabel('expert_team', { exact: true })).toBeChecked();
  else await expect(admin.getByLabel('expert_team', { exact: true })).not.toBeChecked();
}

test('the immigration agent as a coordinator: experts as chips, the state tag never shown, the state in the console', async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  await setCoordinator(admin, true);
  try {
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await trackPanelReady(page);
    await gotoHost(page, '/immigration');
    const p = await openWithLauncher(page);
    // Watch every text change in the panel while the answer streams.
    const frame = page.frames().find((f) => f.url().startsWith(`${APP_URL}/embed/demo-immigration`));
    if (!frame) throw new Error('no panel frame');
    await frame.evaluate(() => {
      (window as unknown as { __seen: string[] }).__seen = [];
      new MutationObserver(() => {
        const text = document.body.innerText;
        if (/consulting_state|"stage"/.test(text)) (window as unknown as { __seen: string[] }).__seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

    const answer = await ask(p, '我32岁，硕士，想了解优才的申请条件', { sendLabel: ZH_SEND, timeout: 45_000 });
    const chips = answer.locator('li.pw-tool');
    await expect(chips).toHaveCount(2);
    await expect(chips.nth(0)).toHaveText(/policy expert$/);
    await expect(chips.nth(1)).toHaveText(/assessment expert$/);
    await expect(chips.nth(0)).toHaveClass(/pw-tool-succeeded/);
    await expect(answer.locator('.pw-bubble')).toContainText('policy expert');
    await expect(answer).not.toContainText('consulting_state');
    expect(await frame.evaluate(() => (window as unknown as { __seen: string[] }).__seen)).toEqual([]);
    expect(errors).toEqual([]);

    // The console shows the reported state on the conversation.
    await admin.goto(`${APP_URL}/admin/conversations`);
    // The newest conversation of the immigration agent is this one.
    await admin.locator('tr', { hasText: '香港移民顾问' }).first().getByRole('link').first().click();
    await expect(admin.getByText('Consulting state')).toBeVisible();
    await expect(admin.getByText('assessment', { exact: true })).toBeVisible();
    await expect(admin.getByText('QMAS', { exact: true })).toBeVisible();
  } finally {
    await setCoordinator(admin, false);
  }
});
