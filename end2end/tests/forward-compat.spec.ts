import { expect, test } from '@playwright/test';
import {
  APP_URL,
  ESCALATION_ANSWER,
  collectErrors,
  gotoHost,
  openWithLauncher,
  send,
  trackPanelReady,
  waitIdle,
} from './helpers';

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  /** Lines other than id/event/data (comments), kept as they are. */
  other: string[];
}

function parseSse(text: string): Frame[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const frame: Frame = { other: [] };
      for (const line of chunk.split('\n')) {
        const m = /^(id|event|data): ?(.*)$/.exec(line);
        if (m) frame[m[1] as 'id' | 'event' | 'data'] = m[2];
        else frame.other.push(line);
      }
      return frame;
    });
}

function writeSse(frames: Frame[]): string {
  return frames
    .map((f) => {
      const lines = [...f.other];
      if (f.id !== undefined) lines.push(`id: ${f.id}`);
      if (f.event !== undefined) lines.push(`event: ${f.event}`);
      if (f.data !== undefined) lines.push(`data: ${f.data}`);
      return lines.join('\n') + '\n\n';
    })
    .join('');
}

for (const fallback of [null, 'A hologram of your order would appear here.']) {
  const title = `a newer server: unknown events and unknown blocks (fallback_text ${JSON.stringify(fallback)}) do not break the panel`;
  test(title, async ({ page }) => {
    const errors = collectErrors(page);
    const rewrites: { usage: number; unknownEvents: number; body: string }[] = [];

    await page.route(`${APP_URL}/api/v1/chat`, async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      const response = await route.fetch();
      const frames = parseSse(await response.text());
      const start = frames.find((f) => f.event === 'message_start');
      const messageId = JSON.parse(start!.data!).message_id as string;
      let usage = 0;
      for (const f of frames) {
        if (f.event === 'usage') {
          usage++;
          f.event = 'block';
          f.data = JSON.stringify({ message_id: messageId, block: { type: 'hologram_v9', fallback_text: fallback } });
        }
      }
      // An event name this build does not know, after everything else, with a fresh, larger id.
      const maxId = Math.max(...frames.filter((f) => f.id !== undefined).map((f) => Number(f.id)));
      frames.push({ id: String(maxId + 1), event: 'teleport', data: JSON.stringify({ to: 'mars', speed: 9 }), other: [] });
      const body = writeSse(frames);
      rewrites.push({ usage, unknownEvents: 1, body });
      await route.fulfill({ response, body });
    });

    await trackPanelReady(page);
    await gotoHost(page);
    const p = await openWithLauncher(page);
    await send(p, 'Can I talk to a person?');

    const answer = p.locator('.pw-msg.pw-assistant').nth(1);
    await expect(answer.locator('.pw-bubble')).toHaveText(ESCALATION_ANSWER);
    await expect(answer).toHaveAttribute('data-status', 'complete');
    const chip = answer.locator('li.pw-tool');
    await expect(chip).toHaveCount(1);
    await expect(chip).toHaveText(/escalate to human/);
    await expect(chip).toHaveClass(/pw-tool-succeeded/);
    await expect(answer.locator('button.pw-escalate')).toHaveText('Talk to a person');
    await expect(answer.locator('button.pw-escalate')).toBeEnabled();
    await waitIdle(p);

    // The interception really happened and really fed unknown things to the panel.
    expect(rewrites).toHaveLength(1);
    expect(rewrites[0].usage).toBeGreaterThanOrEqual(1);
    expect(rewrites[0].body).toContain('"type":"hologram_v9"');
    expect(rewrites[0].body).toContain('event: teleport');
    expect(rewrites[0].body).not.toContain('event: usage');

    // An unknown block shows its fallback text, or nothing without one; the known block stays alone.
    if (fallback === null) {
      await expect(answer.locator('.pw-block-fallback')).toHaveCount(0);
    } else {
      await expect(answer.locator('.pw-block-fallback')).toHaveText(Array(rewrites[0].usage).fill(fallback));
    }
    await expect(answer.locator('.pw-block')).toHaveCount(1);
    // The panel still works after the odd events: the escalation button opens the lead form.
    await answer.locator('button.pw-escalate').click();
    await expect(p.locator('form.pw-lead')).toBeVisible();

    expect(errors, 'no page errors or console errors').toEqual([]);
  });
}
