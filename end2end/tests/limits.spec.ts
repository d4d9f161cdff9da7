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

  // The same visitor calls the API fast, as a script would, until the server refuses it
  // (every attempt counts, also those refused because an answer is still being written).
  let refused = 0;
  for (let i = 0; i < 40 && refused === 0; i++) {
    const r = await request.post(`${APP_URL}/api/v1/chat`, {
      headers: { authorization: `Bearer ${token}` },
      data: { agent: 'demo-help', message: `script ${i}` },
    });
    if (r.status() === 429) {
      refused += 1;
      expect(r.headers()['retry-after']).toMatch(/^\d+$/);
      expect((await r.json()).error).toBe('rate_limited');
    } else {
      await r.body();
    }
  }
  expect(refused, 'the server refused the burst').toBe(1);

  // Now the visitor types in the panel: it explains instead of failing silently.
  await send(p, 'are you there?');
  const bubble = p.locator('.pw-msg.pw-visitor').last();
  await expect(bubble.locator('.pw-error')).toHaveText(/sending messages too quickly/);
});
