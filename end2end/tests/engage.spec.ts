import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import {
  APP_URL,
  DEMO_HOST_URL,
  collectErrors,
  launcher,
  newTriggerForm,
  removeTrigger,
  signIn,
  trackPanelReady,
  waitForPanel,
  writeTrigger,
} from './helpers';

// Issue 44, part 1: triggers and teasers. An owner writes a trigger in the console (Agents →
// Engage); the loader adds its trigger script only for an agent that has one, shows the teaser
// after the time on the page, a button opens the panel and sends its text; the cap stops it the
// second time; the console's preview and the dashboard's counts follow.

/** The spring campaign's page: only this address (with its query) passes the trigger. */
const CAMPAIGN = '/?campaign=spring';

/** Records the host API's teaser events in `window.__teaser`. */
async function listen(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __teaser: string[]; Parley: { on(n: string, h: (d: { trigger: string; button?: string | null }) => void): void } };
    w.__teaser = [];
    w.Parley.on('teaser:shown', (d) => w.__teaser.push(`shown ${d.trigger}`));
    w.Parley.on('teaser:clicked', (d) => w.__teaser.push(`clicked ${d.trigger} ${d.button}`));
  });
}

test('a teaser on time on page: two buttons, a click opens and sends, the cap stops it, preview and counts', async ({ page, browser }) => {
  test.setTimeout(120_000);
  const admin = await signIn(browser);

  // A pattern browsers cannot run is refused, with the field named, and nothing is saved.
  const form = await newTriggerForm(admin);
  await form.getByLabel(/^Name/).fill('broken');
  await form.getByLabel("The page's address").selectOption('matches');
  await form.getByLabel(/^Address, path/).fill('/pricing/(unclosed');
  await form.getByLabel('Message', { exact: true }).fill('Hello');
  await form.getByRole('button', { name: 'Save trigger' }).click();
  await expect(admin.locator('#err-url')).toContainText('not a valid pattern');
  await expect(admin.locator('tr[data-trigger="broken"]')).toHaveCount(0);

  await writeTrigger(admin, {
    name: 'spring',
    url: CAMPAIGN,
    seconds: '2',
    message: 'Spring sale this week: can I help you choose?',
    buttons: ['What can you help with?', 'Not now'],
  });
  const axeConsole = await new AxeBuilder({ page: admin }).analyze();
  expect(axeConsole.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // An agent without triggers: its page loads no trigger script.
  const errors = collectErrors(page);
  await trackPanelReady(page);
  const scripts: string[] = [];
  page.on('request', (r) => scripts.push(r.url()));
  await page.goto(`${DEMO_HOST_URL}/immigration`);
  await expect(launcher(page)).toBeVisible();
  await page.waitForLoadState('networkidle');
  expect(scripts.filter((u) => u.endsWith('/widget-engage.js'))).toEqual([]);

  // A page the trigger does not name: no teaser.
  await page.goto(`${DEMO_HOST_URL}/`);
  await expect(launcher(page)).toBeVisible();
  await page.waitForTimeout(2_500);
  await expect(page.locator('[data-parley] .tz')).toHaveCount(0);
  expect(scripts.filter((u) => u.endsWith('/widget-engage.js')).length).toBeGreaterThan(0);

  // The campaign page: the teaser comes after two seconds, with its two buttons.
  await page.goto(DEMO_HOST_URL + CAMPAIGN);
  await expect(launcher(page)).toBeVisible();
  await listen(page);
  const teaser = page.locator('[data-parley] .tz');
  await expect(teaser).toBeVisible({ timeout: 8_000 });
  await expect(teaser.locator('.tq')).toHaveText('Spring sale this week: can I help you choose?');
  await expect(teaser.locator('.tn')).toHaveText(['What can you help with?', 'Not now']);
  // The iframe is not loaded for a teaser.
  await expect(page.locator('[data-parley] iframe')).toHaveCount(0);
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

  // A button opens the panel and sends its text; the demo model answers it.
  await teaser.getByRole('button', { name: 'What can you help with?' }).click();
  await expect(teaser).toHaveCount(0);
  const p = await waitForPanel(page);
  await expect(p.locator('.pw-msg.pw-visitor .pw-bubble').last()).toHaveText('What can you help with?');
  await expect(p.locator('.pw-msg.pw-assistant').last()).toHaveAttribute('data-status', 'complete', { timeout: 20_000 });
  expect(await page.evaluate(() => (window as unknown as { __teaser: string[] }).__teaser)).toEqual([
    'shown spring',
    'clicked spring What can you help with?',
  ]);

  // The second time (same visitor, a new page view): the cap stops it.
  await page.goto(DEMO_HOST_URL + CAMPAIGN);
  await expect(launcher(page)).toBeVisible();
  await page.waitForTimeout(3_500);
  await expect(page.locator('[data-parley] .tz')).toHaveCount(0);
  expect(errors).toEqual([]);

  // The owner's preview: the address passes, and the link shows it at once (cap or not).
  await admin.locator('tr[data-trigger="spring"]').getByRole('button', { name: /^Preview/ }).click();
  await admin.getByLabel('An address of your site').fill(`${DEMO_HOST_URL}/?campaign=spring`);
  await admin.getByRole('button', { name: 'Check' }).click();
  await expect(admin.locator('#preview-verdict')).toHaveText('It can show on this page.');
  await admin.getByLabel('An address of your site').fill(`${DEMO_HOST_URL}/?campaign=summer`);
  await admin.getByRole('button', { name: 'Check' }).click();
  await expect(admin.locator('#preview-verdict')).toHaveText('It does not show on this page.');
  const link = await admin.locator('#preview-link').getAttribute('href');
  expect(link).toBe(`${DEMO_HOST_URL}/?campaign=summer#parley-preview=spring`);
  await page.goto(link!);
  await expect(page.locator('[data-parley] .tz')).toBeVisible({ timeout: 5_000 });
  // Closing it: the launcher has the focus, and no teaser again this session.
  await page.locator('[data-parley] .tx').click();
  await expect(page.locator('[data-parley] .tz')).toHaveCount(0);
  await expect(launcher(page)).toBeFocused();

  // Counted once shown and once clicked (the preview counts nothing): on the dashboard.
  await expect(async () => {
    await admin.goto(`${APP_URL}/admin`);
    await expect(admin.locator('#teasers tbody tr').filter({ hasText: 'spring' }).locator('td')).toHaveText(
      ['Parley Help Center', 'spring', '1', '1', '100 %'],
      { timeout: 2_000 },
    );
  }).toPass({ timeout: 20_000 });

  // Removed, so the rest of the run's pages are as before.
  await removeTrigger(admin, 'spring');
});

test('a trigger only the page fires: Parley.trigger opens the panel with its greeting', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  const form = await newTriggerForm(admin);
  await form.getByLabel(/^Name/).fill('checkout-help');
  await form.getByLabel('Only when the page calls Parley.trigger(name)').check();
  await form.getByLabel('What').selectOption('open');
  await form.getByLabel('Greeting').fill('Stuck at checkout? I can help with payment and delivery.');
  await form.getByRole('button', { name: 'Save trigger' }).click();
  await expect(admin.locator('tr[data-trigger="checkout-help"]')).toContainText('Parley.trigger only');

  const errors = collectErrors(page);
  await trackPanelReady(page);
  await page.goto(`${DEMO_HOST_URL}/`);
  await expect(launcher(page)).toBeVisible();
  await listen(page);
  // It never fires by itself.
  await page.waitForTimeout(1_500);
  await expect(page.locator('[data-parley] iframe')).toHaveCount(0);
  // The page fires it: the panel opens with the trigger's greeting instead of the agent's.
  await page.evaluate(() => (window as unknown as { Parley: { trigger(n: string): void } }).Parley.trigger('checkout-help'));
  const p = await waitForPanel(page);
  await expect(p.locator('.pw-msg.pw-assistant').first()).toContainText('Stuck at checkout?');
  expect(await page.evaluate(() => (window as unknown as { __teaser: string[] }).__teaser)).toEqual(['shown checkout-help']);
  // Once a page: a second call does nothing.
  await page.evaluate(() => (window as unknown as { Parley: { close(): void; trigger(n: string): void } }).Parley.close());
  await page.evaluate(() => (window as unknown as { Parley: { trigger(n: string): void } }).Parley.trigger('checkout-help'));
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'false');
  expect(errors).toEqual([]);

  await removeTrigger(admin, 'checkout-help');
});
