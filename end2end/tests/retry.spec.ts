import { expect, test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { APP_URL, ask, collectErrors, gotoHost, openWithLauncher, trackPanelReady, waitIdle } from './helpers';

const AGENT = 'demo-help';
const QUESTION = 'hello';

/**
 * Marks the conversation's last answer `interrupted` in the server's database, as crash recovery
 * or a shutdown past its grace period leaves it (the server tests cover those paths with a real
 * `kill -9` and SIGTERM; here the browser's side is what is tested).
 */
function interruptLastAnswer(conversation: string): void {
  const dataDir = process.env.PARLEY_E2E_RUN_DATA_DIR;
  if (!dataDir) throw new Error('PARLEY_E2E_RUN_DATA_DIR is not set');
  const script = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
changed = db.execute(
    "UPDATE messages SET status = 'interrupted' WHERE id = (SELECT id FROM messages"
    " WHERE conversation_id = ? AND role = 'assistant' ORDER BY created_at DESC LIMIT 1)",
    (sys.argv[2],),
).rowcount
db.commit()
sys.exit(0 if changed == 1 else 1)
`;
  execFileSync('python3', ['-c', script, path.join(dataDir, 'parley.db'), conversation]);
}

test('an interrupted answer offers to ask its question again', async ({ page }) => {
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  let p = await openWithLauncher(page);
  await ask(p, QUESTION);
  await expect(p.locator('button.pw-retry')).toHaveCount(0);
  const frame = page.frames().find((f) => f.url().startsWith(`${APP_URL}/embed/${AGENT}`));
  if (!frame) throw new Error('no panel frame');
  const conversation = await frame.evaluate((agent) => localStorage.getItem(`parley:v1:${agent}:conversation`), AGENT);
  expect(conversation).toBeTruthy();

  interruptLastAnswer(conversation!);
  await page.reload();
  p = await openWithLauncher(page);
  const answers = p.locator('.pw-msg.pw-assistant');
  const interrupted = answers.last();
  await expect(interrupted).toHaveAttribute('data-status', 'interrupted');
  await expect(interrupted.locator('.pw-note')).toHaveText('This answer was interrupted.');
  const retry = interrupted.getByRole('button', { name: 'Ask again' });
  await expect(retry).toBeVisible();
  const before = await answers.count();

  await retry.click();
  // The same question goes again and gets a whole answer; the button is gone.
  const visitors = p.locator('.pw-msg.pw-visitor');
  await expect(visitors.last().locator('.pw-bubble')).toHaveText(QUESTION);
  await expect(answers).toHaveCount(before + 1);
  await expect(answers.last()).toHaveAttribute('data-status', 'complete', { timeout: 30_000 });
  await waitIdle(p);
  await expect(p.locator('button.pw-retry')).toHaveCount(0);
  expect(errors).toEqual([]);
});
