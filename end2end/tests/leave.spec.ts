import { expect, test } from '@playwright/test';
import { APP_URL, ZH_SEND, collectErrors, gotoHost, openWithLauncher, send, trackPanelReady } from './helpers';

// Seed 003's abort: the visitor leaving the page while an answer streams stops it (USER_ABORTED)
// within about a second; the partial answer is kept as `stopped`.

const AGENT = 'demo-immigration';

test('leaving the page while an answer streams stops it and keeps the partial answer', async ({ page, request }) => {
  test.setTimeout(60_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page, '/immigration');
  const p = await openWithLauncher(page);
  await expect(p.locator('button.pw-send')).toHaveText(ZH_SEND);
  // A knowledge answer: a couple of hundred tokens, streamed for several seconds.
  await send(p, '优才计划的条件是什么?');
  const streaming = p.locator('.pw-msg.pw-assistant[data-status="streaming"] .pw-bubble');
  await expect(streaming).toHaveText(/\S{8,}/, { timeout: 15_000 });

  const frame = page.frames().find((f) => f.url().startsWith(`${APP_URL}/embed/${AGENT}`));
  if (!frame) throw new Error('no panel frame');
  const [token, conversation] = await frame.evaluate((agent) => {
    return [localStorage.getItem(`parley:v1:${agent}:token`), localStorage.getItem(`parley:v1:${agent}:conversation`)];
  }, AGENT);
  expect(token).toBeTruthy();
  expect(conversation).toBeTruthy();
  expect(errors).toEqual([]);

  // The visitor goes elsewhere.
  const left = Date.now();
  await page.goto('about:blank');

  let last: { status: string; text: string } | undefined;
  await expect
    .poll(
      async () => {
        const r = await request.get(`${APP_URL}/api/v1/conversations/${conversation}`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        const transcript = await r.json();
        last = transcript.messages[transcript.messages.length - 1];
        return last?.status;
      },
      { timeout: 3_000, intervals: [100] },
    )
    .toBe('stopped');
  expect(Date.now() - left).toBeLessThan(3_000);
  expect(last?.text.length).toBeGreaterThan(0);
});
