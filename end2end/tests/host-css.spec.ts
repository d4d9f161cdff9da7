import { expect, test } from '@playwright/test';
import { AGENT_COLOR, gotoHost, launcher, openWithLauncher, trackPanelReady } from './helpers';

const HOST_RED = 'rgb(178, 34, 34)';

test("the host page's CSS does not reach the launcher or the panel", async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);

  // The host really is loud: its own text is Georgia and its buttons are red.
  const hostFont = await page.locator('main p').first().evaluate((e) => getComputedStyle(e).fontFamily);
  expect(hostFont).toContain('Georgia');
  const hostButton = page.getByRole('button', { name: 'Parley.open()' });
  await expect(hostButton).toHaveCSS('background-color', HOST_RED);

  // The launcher (shadow DOM) keeps the agent's colour.
  const l = launcher(page);
  await expect(l).toHaveCSS('background-color', AGENT_COLOR);
  await expect(l).toHaveCSS('color', 'rgb(255, 255, 255)');
  await expect(l).toHaveCSS('border-radius', '50%');
  await expect(l).toHaveCSS('width', '56px');
  await expect(l).toHaveCSS('letter-spacing', 'normal');

  // The panel (iframe on the app origin).
  const p = await openWithLauncher(page);
  const bubble = p.locator('.pw-msg.pw-assistant .pw-bubble').first();
  await expect(bubble).toBeVisible();
  const bubbleFont = await bubble.evaluate((e) => getComputedStyle(e).fontFamily);
  expect(bubbleFont).not.toMatch(/georgia/i);
  expect(bubbleFont).toMatch(/system-ui|sans-serif/);
  const inputFont = await p.locator('textarea.pw-input').evaluate((e) => getComputedStyle(e).fontFamily);
  expect(inputFont).not.toMatch(/georgia/i);
  const send = p.locator('button.pw-send');
  await expect(send).toBeVisible();
  const sendBg = await send.evaluate((e) => getComputedStyle(e).backgroundColor);
  expect(sendBg).not.toBe(HOST_RED);
  await expect(send).toHaveCSS('letter-spacing', 'normal');
  // The launcher is unchanged once open.
  await expect(l).toHaveCSS('background-color', AGENT_COLOR);
});
