import { expect, test, type FrameLocator } from '@playwright/test';
import {
  APP_URL,
  DEMO_HOST_URL,
  ESCALATION_ANSWER,
  GREETING,
  collectErrors,
  gotoHost,
  iframe,
  launcher,
  openWithLauncher,
  panelBox,
  send,
  trackPanelReady,
  waitIdle,
} from './helpers';

const HELLO_ANSWER = "Hello! I'm Parley's offline demo model. Ask me something, or say \"talk to a person\" to reach a human.";

/** Records, inside the iframe, the newest assistant message's text length on every DOM change. */
async function startSampling(p: FrameLocator): Promise<void> {
  await p.locator('#pw-list').evaluate((list) => {
    const samples: NonNullable<Window['__parleySamples']> = [];
    window.__parleySamples = samples;
    const record = () => {
      const msgs = list.querySelectorAll('.pw-msg.pw-assistant');
      const last = msgs[msgs.length - 1];
      samples.push({
        t: performance.now(),
        len: last?.querySelector('.pw-bubble')?.textContent?.length ?? 0,
        status: last?.getAttribute('data-status') ?? null,
        assistants: msgs.length,
        stop: document.querySelector('button.pw-stop') !== null,
      });
    };
    record();
    new MutationObserver(record).observe(list, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
}

test('cross-origin embed: chat streams, escalation, lead form, transcript restored after reload', async ({ page }) => {
  test.setTimeout(60_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);

  // The host page and the panel live on different origins.
  expect(new URL(page.url()).origin).toBe(DEMO_HOST_URL);
  expect(DEMO_HOST_URL).not.toBe(APP_URL);
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'false');
  await expect(iframe(page)).toHaveCount(0); // the panel loads only when opened

  const p = await openWithLauncher(page);
  await expect(launcher(page)).toHaveAttribute('aria-expanded', 'true');
  const src = await iframe(page).getAttribute('src');
  expect(src).not.toBeNull();
  expect(src!.startsWith(`${APP_URL}/embed/demo-help?origin=http%3A%2F%2F127.0.0.1%3A3101`)).toBe(true);
  const frame = page.frames().find((f) => f.url().startsWith(`${APP_URL}/embed/demo-help`));
  expect(frame, 'the panel frame').toBeTruthy();
  expect(await frame!.evaluate(() => location.origin)).toBe(APP_URL);
  // Same-origin policy holds: the host page cannot read the panel's document.
  const hostCanRead = await page.evaluate(() => {
    const f = document.querySelector('div[data-parley]')!.shadowRoot!.querySelector('iframe')!;
    return f.contentDocument !== null;
  });
  expect(hostCanRead).toBe(false);

  await expect(p.locator('.pw-header .pw-demo')).toHaveText('Offline demo model');
  const assistants = p.locator('.pw-msg.pw-assistant');
  await expect(assistants).toHaveCount(1);
  await expect(assistants.first().locator('.pw-bubble')).toHaveText(GREETING);

  // 1. "Hello": the answer streams in token by token.
  await startSampling(p);
  await send(p, 'Hello');
  await expect(assistants).toHaveCount(2);
  const hello = assistants.nth(1);
  await expect(hello.locator('.pw-bubble')).toHaveText(HELLO_ANSWER);
  await expect(hello).toHaveAttribute('data-status', 'complete');
  await waitIdle(p);
  const samples = (await p.locator('#pw-list').evaluate(() => window.__parleySamples!)).filter(
    (s) => s.assistants === 2,
  );
  // The bubble's raw textContent may carry the markdown renderer's line breaks: measure against
  // the final sample rather than the answer's string length.
  const full = samples[samples.length - 1].len;
  expect(full).toBeGreaterThanOrEqual(HELLO_ANSWER.length);
  const partial = samples.filter((s) => s.len > 0 && s.len < full && s.status === 'streaming');
  const lengths = new Set(samples.map((s) => s.len));
  expect(partial.length, `partial texts seen while streaming: ${JSON.stringify(samples)}`).toBeGreaterThan(0);
  expect(lengths.size, 'the text grew in several steps').toBeGreaterThanOrEqual(4);
  expect(partial.every((s) => s.stop), 'the Send button is a Stop button while the answer streams').toBe(true);
  const firstText = samples.find((s) => s.len > 0)!;
  const complete = samples.find((s) => s.len === full)!;
  expect(complete.t - firstText.t, 'time between the first token and the full text (ms)').toBeGreaterThan(200);
  // It only grows.
  for (let i = 1; i < samples.length; i++) expect(samples[i].len).toBeGreaterThanOrEqual(samples[i - 1].len);

  // 2. Asking for a person: the tool runs, the answer streams, the escalation button appears.
  await startSampling(p);
  await send(p, 'Can I talk to a real person?');
  await expect(assistants).toHaveCount(3);
  const escalation = assistants.nth(2);
  const chip = escalation.locator('li.pw-tool');
  await expect(chip).toHaveCount(1);
  await expect(chip).toHaveText(/escalate to human/);
  await expect(chip).toHaveClass(/pw-tool-(started|succeeded)/);
  await expect(chip).toHaveClass(/pw-tool-succeeded/);
  await expect(escalation.locator('.pw-bubble')).toHaveText(ESCALATION_ANSWER);
  await expect(escalation.locator('.pw-bubble strong')).toHaveText('Talk to a person'); // markdown
  await expect(escalation).toHaveAttribute('data-status', 'complete');
  await waitIdle(p);
  const escSamples = (await p.locator('#pw-list').evaluate(() => window.__parleySamples!)).filter(
    (s) => s.assistants === 3,
  );
  const escFull = escSamples[escSamples.length - 1].len;
  expect(
    escSamples.some((s) => s.len > 0 && s.len < escFull && s.status === 'streaming'),
    `escalation answer streamed: ${JSON.stringify(escSamples)}`,
  ).toBe(true);
  const escalate = escalation.locator('button.pw-escalate');
  await expect(escalate).toHaveText('Talk to a person');
  await expect(escalate).toBeEnabled();

  // 3. The lead form: empty → field errors; filled → thanks.
  await escalate.click();
  const form = p.locator('form.pw-lead');
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: 'Send request' }).click();
  const fieldErrors = form.locator('.pw-field-error').filter({ hasText: /\S/ });
  await expect(fieldErrors).toHaveText(['Please enter your name.', 'Please give an email address or a phone number.']);
  await form.locator('input[name="name"]').fill('Ada Lovelace');
  await form.locator('input[name="email"]').fill('ada@example.com');
  await form.locator('textarea[name="message"]').fill('Please call me back about my order.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);
  await expect(escalate).toHaveText('Thanks! A person will get back to you soon.');
  await expect(escalate.locator('svg.pw-svg')).toHaveCount(1);
  await expect(escalate).toBeDisabled();
  await expect(p.locator('.pw-handoff')).toHaveText('A person has been asked to join.');

  // 4. Reload the host page: the transcript comes back from the server.
  await page.reload();
  await expect(launcher(page)).toBeVisible();
  const q = await openWithLauncher(page);
  const restored = q.locator('.pw-msg.pw-assistant');
  await expect(restored).toHaveCount(3);
  await expect(restored.nth(0).locator('.pw-bubble')).toHaveText(GREETING);
  await expect(q.locator('.pw-msg.pw-visitor .pw-bubble')).toHaveText(['Hello', 'Can I talk to a real person?']);
  await expect(restored.nth(1).locator('.pw-bubble')).toHaveText(HELLO_ANSWER);
  await expect(restored.nth(2).locator('.pw-bubble')).toHaveText(ESCALATION_ANSWER);
  const restoredChip = restored.nth(2).locator('li.pw-tool');
  await expect(restoredChip).toHaveCount(1);
  await expect(restoredChip).toHaveText(/escalate to human/);
  await expect(restoredChip).toHaveClass(/pw-tool-succeeded/);
  const restoredButton = restored.nth(2).locator('button.pw-escalate');
  await expect(restoredButton).toHaveText('Thanks! A person will get back to you soon.');
  await expect(restoredButton).toBeDisabled();
  await expect(q.locator('.pw-handoff')).toBeVisible();
  // Order: visitor, answer, visitor, answer after the greeting.
  await expect(q.locator('#pw-list > .pw-msg')).toHaveCount(5);
  const roles = await q.locator('#pw-list > .pw-msg').evaluateAll((els) => els.map((e) => e.className));
  expect(roles.map((c) => (c.includes('pw-visitor') ? 'v' : c.includes('pw-assistant') ? 'a' : '?'))).toEqual([
    'a',
    'v',
    'a',
    'v',
    'a',
  ]);
  await expect(panelBox(page)).toHaveClass(/(^|\s)o(\s|$)/);

  expect(errors, 'no page errors').toEqual([]);
});
