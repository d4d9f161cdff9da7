import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import {
  APP_URL,
  DEMO_HOST_URL,
  ask,
  collectErrors,
  gotoHost,
  launcher,
  openWithLauncher,
  panelBox,
  signIn,
  trackPanelReady,
} from './helpers';

/** Serious and critical axe violations of the page. */
async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

// Issue 15, items 3 and 4: the panel speaks the visitor's language; the owner's look (set in the
// console's agent form) reaches the panel and the loader.

test.describe('a browser that prefers Traditional Chinese', () => {
  test.use({ locale: 'zh-TW' });

  test('gets Traditional Chinese from an agent set to the automatic language', async ({ page }) => {
    const errors = collectErrors(page);
    await trackPanelReady(page);
    await gotoHost(page); // demo-help: language "auto", greets in English
    await expect(launcher(page)).toHaveAttribute('aria-label', /^開啟對話/);
    const p = await openWithLauncher(page);
    await expect(p.locator('html')).toHaveAttribute('lang', 'zh-Hant');
    await expect(p.locator('.pw-panel')).toHaveAttribute('lang', 'zh-Hant');
    await expect(p.locator('button.pw-send')).toHaveText('傳送');
    await expect(p.locator('textarea.pw-input')).toHaveAttribute('placeholder', '輸入訊息…');
    await expect(p.getByRole('button', { name: '新對話' })).toBeVisible();
    await expect(p.getByRole('button', { name: '附加圖片' })).toBeVisible();
    // A block's label is the panel's too (not the server's English or Simplified words).
    const answer = await ask(p, 'I want to talk to a person', { sendLabel: '傳送' });
    await expect(answer.locator('button.pw-escalate')).toHaveText('聯絡真人客服');
    await answer.locator('button.pw-escalate').click();
    const form = p.locator('form.pw-lead');
    await expect(form.locator('h3')).toHaveText('聯絡真人客服');
    // The lead form's own checks speak it as well.
    await form.getByRole('button', { name: '提交' }).click();
    await expect(form.locator('.pw-field-error').first()).toHaveText('請填寫您的姓名。');
    const text = await p.locator('.pw-panel').innerText();
    for (const simplified of ['发送', '输入', '联系', '对话', '请']) {
      expect(text, `no Simplified "${simplified}" in the chrome`).not.toContain(simplified);
    }
    expect(errors).toEqual([]);
  });
});

/** Fills the agent form's look fields. */
async function fillLook(page: Page, look: Record<string, string>): Promise<void> {
  for (const [label, value] of Object.entries(look)) {
    const field = page.getByLabel(label, { exact: true });
    if ((await field.evaluate((e) => e.tagName)) === 'SELECT') await field.selectOption(value);
    else await field.fill(value);
  }
}

const WIDTH = 'Panel width (320 to 480 px)';
const HEIGHT = 'Panel height (400 to 800 px)';
const TEXT = 'Text on the theme colour (empty: black or white, whichever reads best)';
const STARTERS = 'Starter questions, shown before the first message (one per line, up to four)';
const LABEL = 'Launcher label beside the icon (optional, up to 24 characters)';

test("the owner's look: set in the console with checks and a preview, seen in the panel and the launcher", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  const adminErrors = collectErrors(admin);
  await admin.goto(`${APP_URL}/admin/agents/new`);
  await expect(admin.getByRole('heading', { name: 'New agent' })).toBeVisible();
  await admin.getByLabel('Name', { exact: true }).fill('Look test');
  await admin.getByLabel('Public key (in the embed snippet)').fill('look-e2e');
  await admin.getByLabel('Allowed origins (one per line; none: no website can embed it yet; * for any)').fill('*');
  await admin.getByLabel('Greeting', { exact: true }).fill('Hello from the look test.');

  // Wrong values are named, field by field, by the server.
  await fillLook(admin, {
    [WIDTH]: '1000',
    [HEIGHT]: '300',
    [TEXT]: 'white',
    [LABEL]: 'A label far too long for a launcher',
    [STARTERS]: 'One?\nTwo?\nThree?\nFour?\nFive?',
  });
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin.locator('#err-panel_width')).toContainText('320 to 480');
  await expect(admin.locator('#err-panel_height')).toContainText('400 to 800');
  await expect(admin.locator('#err-text_color')).toContainText('#ffffff');
  await expect(admin.locator('#err-launcher_label')).toContainText('24 characters');
  await expect(admin.locator('#err-starters')).toContainText('At most 4');
  await expect(admin).toHaveURL(/\/admin\/agents\/new$/);

  // A text colour that does not contrast is warned about as it is typed; the preview follows.
  await admin.getByLabel('Theme colour', { exact: true }).fill('#facc15');
  await fillLook(admin, { [TEXT]: '#ffffff' });
  await expect(admin.locator('#a-contrast-warning')).toContainText('below the 4.5:1');
  await expect(admin.locator('.c-look .pw-header')).toHaveCSS('color', 'rgb(255, 255, 255)');
  await fillLook(admin, { [TEXT]: '' });
  await expect(admin.locator('#a-contrast-warning')).toHaveCount(0);
  await expect(admin.locator('.c-look .pw-header')).toHaveCSS('color', 'rgb(17, 24, 39)');

  await fillLook(admin, {
    [WIDTH]: '420',
    [HEIGHT]: '560',
    [LABEL]: 'Ask us',
    'Launcher icon': 'sparkle',
    'Colour scheme': 'auto',
    'Input placeholder (empty: “Type a message…” in the visitor\'s language)': 'Ask about the shop…',
    [STARTERS]: 'What are your opening hours?\nI want to talk to a person',
  });
  await expect(admin.locator('.c-look .pw-starter')).toHaveText(['What are your opening hours?', 'I want to talk to a person']);
  await expect(admin.locator('.c-look-launcher')).toHaveText('Ask us');
  await admin.getByRole('button', { name: 'Save' }).click();
  await expect(admin).toHaveURL(/\/admin\/agents\/[0-9a-f-]+$/);
  await expect(admin.getByLabel(WIDTH)).toHaveValue('420');
  await expect(admin.getByLabel('Colour scheme')).toHaveValue('auto');
  expect(adminErrors).toEqual([]);

  // A visitor whose system is dark: the dark palette, the owner's placeholder, the starters.
  const dark = await browser.newContext({ colorScheme: 'dark' });
  const page = await dark.newPage();
  const errors = collectErrors(page);
  await page.goto(`${APP_URL}/embed/look-e2e`);
  await expect(page.locator('.pw-panel')).toHaveCSS('background-color', 'rgb(17, 24, 39)');
  await expect(page.locator('.pw-panel')).toHaveCSS('color', 'rgb(249, 250, 251)');
  await expect(page.locator('textarea.pw-input')).toHaveAttribute('placeholder', 'Ask about the shop…');
  const chips = page.getByRole('group', { name: 'Suggested questions' }).getByRole('button');
  await expect(chips).toHaveText(['What are your opening hours?', 'I want to talk to a person']);
  expect(await serious(page), 'the dark palette with starters').toEqual([]);
  // A chip sends its question; the demo model answers; the chips give way to the conversation.
  await chips.first().click();
  await expect(page.locator('.pw-msg.pw-visitor .pw-bubble')).toHaveText('What are your opening hours?');
  await expect(page.locator('.pw-msg.pw-assistant').nth(1)).toHaveAttribute('data-status', 'complete', {
    timeout: 30_000,
  });
  await expect(page.locator('.pw-msg.pw-assistant').nth(1).locator('.pw-bubble')).not.toBeEmpty();
  await expect(page.locator('.pw-starters')).toHaveCount(0);
  expect(await serious(page), 'the dark palette, answered').toEqual([]);
  expect(errors).toEqual([]);

  // The same agent in a light system keeps the light palette (auto follows the system).
  const light = await browser.newContext({ colorScheme: 'light' });
  const lightPage = await light.newPage();
  await lightPage.goto(`${APP_URL}/embed/look-e2e`);
  await expect(lightPage.locator('.pw-panel')).toHaveCSS('background-color', 'rgb(255, 255, 255)');

  // The loader on a website: the launcher's label and the panel's size. The demo host page (a
  // real one: Chromium keeps a page a test makes up from reaching loopback) is made to embed this
  // agent instead of demo-help, before its loader runs.
  await lightPage.addInitScript(() => {
    new MutationObserver(() => {
      const s = document.querySelector('script[data-agent="demo-help"]');
      if (s) s.setAttribute('data-agent', 'look-e2e');
    }).observe(document, { childList: true, subtree: true });
  });
  await trackPanelReady(lightPage);
  await lightPage.goto(DEMO_HOST_URL);
  await expect(launcher(lightPage)).toHaveText('Ask us');
  await expect(launcher(lightPage).locator('svg')).toHaveCount(1);
  await launcher(lightPage).click();
  await expect(panelBox(lightPage)).toHaveClass(/(^|\s)o(\s|$)/);
  const box = await panelBox(lightPage).boundingBox();
  expect(box?.width).toBe(420);
  expect(box?.height).toBe(560);
  await dark.close();
  await light.close();
  await admin.context().close();
});

test('an agent set to light keeps the light palette in a dark browser', async ({ browser }) => {
  const dark = await browser.newContext({ colorScheme: 'dark' });
  const page = await dark.newPage();
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  await expect(p.locator('.pw-panel')).toHaveCSS('background-color', 'rgb(255, 255, 255)');
  await dark.close();
});
