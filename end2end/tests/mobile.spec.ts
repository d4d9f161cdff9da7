import { expect, test } from '@playwright/test';
import { gotoHost, iframe, launcher, openWithLauncher, panel, panelBox, trackPanelReady } from './helpers';

test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: false });

test('on a phone the open panel covers the whole screen and the input does not zoom', async ({ page }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);

  for (const target of [panelBox(page), iframe(page)]) {
    const box = await target.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeCloseTo(0, 0);
    expect(box!.y).toBeCloseTo(0, 0);
    expect(box!.width).toBeCloseTo(390, 0);
    expect(box!.height).toBeCloseTo(844, 0);
  }
  const panelRect = await p.locator('.pw-panel').boundingBox();
  expect(panelRect!.width).toBeCloseTo(390, 0);
  expect(panelRect!.height).toBeCloseTo(844, 0);

  // 16px: iOS Safari zooms into smaller inputs.
  await expect(p.locator('textarea.pw-input')).toHaveCSS('font-size', '16px');
  await expect(p.locator('textarea.pw-input')).toBeInViewport();
  await expect(p.locator('button.pw-send')).toBeInViewport();

  // The launcher hides under the full-screen panel; the panel's close button brings it back.
  await expect(launcher(page)).toBeHidden();
  await panel(page).getByRole('button', { name: 'Close chat' }).click();
  await expect(panelBox(page)).toBeHidden();
  await expect(launcher(page)).toBeVisible();
});
