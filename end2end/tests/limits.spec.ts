import { expect, test } from '@playwright/test';
import { APP_URL, ask, gotoHost, iframe, openWithLauncher, send, trackPanelReady } from './helpers';

test('the widget says so, in words, when the visitor sends too fast', async ({ page, request }) => {
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  await ask(p, 'hello');

  // The panel's own visitor, from its storage (the panel runs on Parley's origin).
  const frame = await (await iframe(page).elementHandle())!.contentFrame();
  const token = await frame!.evaluate(() => localStorage.getItem('parley:v1:demo-help:token'));
  expect(token, 'the panel stored its visitor token').toBeTruthy();

  // The same visitor calls the API as a script would: 40 sends at once. Every attempt counts
  // (also those refused because an answer is still being written), so the burst passes the
  // visitor's figure and some are refused with 429 and a wait.
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      request.post(`${APP_URL}/api/v1/chat`, {
        headers: { authorization: `Bearer ${token}` },
        data: { agent: 'demo-help', message: `script ${i}` },
      }),
    ),
  );
  const refused = answers.filter((r) => r.status() === 429);
  expect(refused.length, 'the server refused part of the burst').toBeGreaterThan(0);
  expect(refused[0].headers()['retry-after']).toMatch(/^\d+$/);
  expect((await refused[0].json()).error).toBe('rate_limited');

  // Now the visitor types in the panel: it explains instead of failing silently.
  await send(p, 'are you there?');
  const bubble = p.locator('.pw-msg.pw-visitor').last();
  await expect(bubble.locator('.pw-error')).toHaveText(/sending messages too quickly/);
});
