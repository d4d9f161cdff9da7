import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import * as path from 'node:path';
import { expect, test } from '@playwright/test';
import { DEMO_HOST_URL, ask, collectErrors, gotoHost, openWithLauncher, panel, signIn, trackPanelReady, waitForPanel } from './helpers';

// The SMTP sink beside the server and Parley's own inbound listener (playwright.config.ts).
const SMTP_PORT = 3125;
const INBOUND_PORT = 3126;
const mailFile = () => path.join(process.env.PARLEY_E2E_RUN_DATA_DIR ?? '', 'mail.jsonl');
const sendScript = path.resolve(__dirname, '../../server/tests/it/harness/smtp_send.py');

type Mail = { rcpt_tos: string[]; subject: string; text: string; reply_to: string | null };

function mailsTo(address: string): Mail[] {
  if (!existsSync(mailFile())) return [];
  return readFileSync(mailFile(), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Mail)
    .filter((m) => m.rcpt_tos.includes(address));
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.end(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** Sends a mail with Python's smtplib to Parley's inbound listener; what smtplib reported. */
function smtpSend(from: string, to: string, body: string): unknown {
  const out = execFileSync('python3', [sendScript, String(INBOUND_PORT), from, to, 'Re: your conversation'], {
    input: body,
    timeout: 30_000,
  });
  return JSON.parse(out.toString());
}

// Issue 44, part 2: a visitor who left gets the operator's reply by mail, follows its link back
// into the conversation, and answers the mail; the answer reaches the console and the panel.
test('a visitor who left gets the reply by mail, comes back by its link, and answers by mail', async ({ browser }) => {
  test.skip(!(await listening(SMTP_PORT)), 'aiosmtpd is not installed: no SMTP sink beside the server');
  test.setTimeout(120_000);
  const stamp = Date.now();
  const address = `back-${stamp}@example.com`;

  // The visitor asks for a person, leaves their address, and closes the tab.
  const first = await browser.newContext();
  const page = await first.newPage();
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const escalation = await ask(p, `Can I talk to a real person about parcel ${stamp}?`);
  await escalation.locator('button.pw-escalate').click();
  const form = p.locator('form.pw-lead');
  await form.locator('input[name="name"]').fill('Back E2E');
  await form.locator('input[name="email"]').fill(address);
  await form.locator('textarea[name="message"]').fill('Mail me the answer.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);
  await first.close();

  // An operator takes it over and replies.
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  await admin.getByRole('link', { name: 'Conversations', exact: true }).click();
  // (One worker runs the specs one by one: the newest conversation is this visitor's.)
  const row = admin.locator('#conversations tbody tr').first();
  await expect(row).toContainText('lead');
  await row.locator('td:first-child a').click();
  await expect(admin.locator('.c-transcript')).toContainText(`parcel ${stamp}`);
  await admin.getByRole('button', { name: 'Take over' }).click();
  const reply = admin.getByLabel('Your reply to the visitor');
  await reply.fill(`Your parcel ${stamp} left today.`);
  await admin.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(admin.locator('.c-transcript')).toContainText(`Your parcel ${stamp} left today.`);

  // The mail: the reply, a link to the page the visitor wrote from, a reply address.
  await expect.poll(() => mailsTo(address).filter((m) => m.subject.includes('replied to you')).length, { timeout: 45_000 }).toBe(1);
  const mail = mailsTo(address).find((m) => m.subject.includes('replied to you'))!;
  expect(mail.text).toContain(`Your parcel ${stamp} left today.`);
  const link = /(http\S+#parley-return=[\w-]+)/.exec(mail.text)![1];
  expect(link.startsWith(`${DEMO_HOST_URL}/`)).toBe(true);
  expect(mail.reply_to).toMatch(/^reply\+pr_[\w-]+@in\.e2e\.test$/);

  // The link, in another browser: the panel opens on the conversation; the token leaves the address.
  const second = await browser.newContext();
  const back = await second.newPage();
  await trackPanelReady(back);
  await back.goto(link);
  const again = await waitForPanel(back);
  await expect(again.getByText(`Your parcel ${stamp} left today.`)).toBeVisible();
  await expect(again.getByText(`Can I talk to a real person about parcel ${stamp}?`)).toBeVisible();
  expect(back.url()).not.toContain('parley-return');

  // The answer by mail (quoted mail below it): in the panel, live, and in the console.
  const quoted = `Thanks, I will watch for it.\n\nOn Monday, Parley wrote:\n> Your parcel ${stamp} left today.\n`;
  expect(smtpSend(address, mail.reply_to!, quoted)).toEqual({ sent: true });
  await expect(again.locator('.pw-msg.pw-visitor').last()).toContainText('Thanks, I will watch for it.');
  await expect(panel(back).getByText('On Monday, Parley wrote:')).toHaveCount(0);
  await expect(admin.locator('.c-transcript')).toContainText('Thanks, I will watch for it.');
  // The same reply address again: refused, nothing added.
  expect(smtpSend(address, mail.reply_to!, 'Once more')).toMatchObject({ refused: 550, at: 'rcpt' });
  expect(errors).toEqual([]);
  await second.close();
  await admin.context().close();
});
