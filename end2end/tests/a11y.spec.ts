import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import {
  APP_URL,
  ask,
  gotoHost,
  launcher,
  openWithLauncher,
  panel,
  panelBox,
  trackPanelReady,
} from './helpers';

/** Serious and critical violations axe finds in the page (frames included). */
async function serious(page: Page, include?: string): Promise<string[]> {
  let builder = new AxeBuilder({ page });
  if (include) builder = builder.include(include);
  const result = await builder.analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

test('the panel has no serious accessibility violation: empty, answered, with blocks and the lead form', async ({ page }) => {
  // The embed page on its own, as axe sees the frame's document.
  await page.goto(`${APP_URL}/embed/demo-help`);
  await expect(page.locator('textarea.pw-input')).toBeVisible();
  expect(await serious(page)).toEqual([]);

  // In the host page, after a streamed answer with an escalation button, then with the lead form.
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  await ask(p, 'What are your opening hours?');
  expect(await serious(page)).toEqual([]);
  await ask(p, 'I want to talk to a person');
  await expect(p.locator('.pw-escalate')).toBeVisible();
  expect(await serious(page)).toEqual([]);
  await p.locator('.pw-escalate').first().click();
  await expect(p.locator('.pw-lead')).toBeVisible();
  expect(await serious(page)).toEqual([]);
});

test('keyboard: open, type, Escape closes and the focus returns to the launcher', async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  await launcher(page).focus();
  await page.keyboard.press('Enter');
  const p = panel(page);
  await expect(p.locator('textarea.pw-input')).toBeFocused();
  await page.keyboard.type('typed without a mouse');
  await expect(p.locator('textarea.pw-input')).toHaveValue('typed without a mouse');
  await page.keyboard.press('Escape');
  await expect(panelBox(page)).toBeHidden();
  await expect(launcher(page)).toBeFocused();
  // Open again: the draft is still there and the focus goes back in.
  await page.keyboard.press('Enter');
  await expect(p.locator('textarea.pw-input')).toBeFocused();
  await expect(p.locator('textarea.pw-input')).toHaveValue('typed without a mouse');
});

test('each finished answer is announced once, not token by token', async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  // The list is not live (every token would be read out); one polite region gets the answer.
  await expect(p.locator('#pw-list')).toHaveAttribute('aria-live', 'off');
  const announcer = p.locator('.pw-sr[aria-live="polite"]');
  await expect(announcer).toHaveText('');
  const answer = await ask(p, 'What are your opening hours?');
  const said = (await announcer.textContent()) ?? '';
  const first = (await answer.locator('.pw-bubble').first().innerText()).trim().split('\n')[0];
  expect(said.length).toBeGreaterThan(10);
  expect(said).toContain(first.slice(0, 15));
});

test('text on the owner colour keeps its contrast: a light colour gets dark text', async ({ page }) => {
  await page.goto(`${APP_URL}/embed/demo-help`);
  await expect(page.locator('.pw-panel')).toBeVisible();
  // The seeded indigo gets white text.
  await expect(page.locator('.pw-header')).toHaveCSS('color', 'rgb(255, 255, 255)');
});

test('every console page has no serious accessibility violation', async ({ page }) => {
  await page.goto(`${APP_URL}/admin/login`);
  expect(await serious(page)).toEqual([]);
  await page.getByLabel('Email').fill('admin@e2e.test');
  await page.getByLabel('Password').fill('e2e-admin-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  for (const path of ['/admin', '/admin/conversations', '/admin/leads', '/admin/orders', '/admin/agents', '/admin/agents/new', '/admin/knowledge', '/admin/models', '/admin/experts', '/admin/tokens']) {
    await page.goto(APP_URL + path);
    await expect(page.locator('h1').first()).toBeVisible();
    expect(await serious(page), path).toEqual([]);
  }
});
