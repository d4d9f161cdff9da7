import AxeBuilder from '@axe-core/playwright';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import * as path from 'node:path';
import { expect, test } from '@playwright/test';
import { ask, gotoHost, openWithLauncher, trackPanelReady } from './helpers';

/** The SMTP sink the web server starts beside Parley (playwright.config.ts) and its mail file. */
const SMTP_PORT = 3125;
const mailFile = () => path.join(process.env.PARLEY_E2E_RUN_DATA_DIR ?? '', 'mail.jsonl');

type Mail = { rcpt_tos: string[]; subject: string; text: string };

function mails(): Mail[] {
  if (!existsSync(mailFile())) return [];
  return readFileSync(mailFile(), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Mail);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.end(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

test('the transcript goes to a typed address only after the code mailed to it', async ({ page }) => {
  test.skip(!(await listening(SMTP_PORT)), 'aiosmtpd is not installed: no SMTP sink beside the server');
  const address = `mai-${Date.now()}@example.com`;
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const escalation = await ask(p, 'Can I talk to a real person?');
  await escalation.locator('button.pw-escalate').click();
  const form = p.locator('form.pw-lead');
  await form.locator('input[name="name"]').fill('Mai E2E');
  await form.locator('input[name="email"]').fill(address);
  await form.locator('textarea[name="message"]').fill('Please send me the conversation.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);

  // Asking for the transcript mails a code, and nothing of the conversation.
  await p.getByRole('button', { name: 'Email me this conversation' }).click();
  const box = p.locator('.pw-email');
  await expect(box.getByRole('status')).toHaveText('To check the address is yours, enter the code we mailed to m***@example.com');
  let code = '';
  await expect
    .poll(() => {
      const m = mails().find((m) => m.rcpt_tos.includes(address));
      code = m ? m.subject.replace(/\D/g, '') : '';
      return code.length;
    }, { timeout: 15_000 })
    .toBe(6);
  const codeMail = mails().find((m) => m.rcpt_tos.includes(address))!;
  expect(codeMail.text).not.toContain('real person');
  const violations = (await new AxeBuilder({ page }).analyze()).violations.filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
  expect(violations.map((v) => v.id)).toEqual([]);

  // A wrong code keeps the field; the right one sends the transcript.
  const field = box.getByLabel('Code');
  await field.fill(code === '000000' ? '000001' : '000000');
  await box.getByRole('button', { name: 'Confirm' }).click();
  await expect(box.getByRole('status')).toHaveText(/wrong or has expired/);
  await box.getByLabel('Code').fill(code);
  await box.getByRole('button', { name: 'Confirm' }).click();
  await expect(box.getByRole('status')).toHaveText('The conversation is on its way to m***@example.com');
  await expect
    .poll(() => mails().filter((m) => m.rcpt_tos.includes(address) && m.subject.startsWith('Your conversation')).length, {
      timeout: 15_000,
    })
    .toBe(1);
  const transcript = mails().find((m) => m.rcpt_tos.includes(address) && m.subject.startsWith('Your conversation'))!;
  expect(transcript.text).toContain('Can I talk to a real person?');
  await expect(box.getByRole('button', { name: 'Email me this conversation' })).toBeVisible();
});
