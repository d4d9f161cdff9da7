import { expect, test } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { APP_URL, ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

const ADMIN = { email: 'admin@e2e.test', password: 'e2e-admin-password' };

test('a thumbs down reaches Unanswered questions, the fixed answer becomes an article, a saved reply answers', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const question = `Do you deliver to Mars ${Date.now()}?`;
  const answer = await ask(p, question);

  // The visitor finds the answer not helpful and says why.
  const thumbs = answer.getByRole('group', { name: 'Was this answer helpful?' });
  // Icons are inline SVG (the same on every system), never an emoji or a font glyph.
  for (const name of ['Helpful', 'Not helpful']) {
    await expect(thumbs.getByRole('button', { name, exact: true }).locator('svg.pw-svg')).toHaveCount(1);
    await expect(thumbs.getByRole('button', { name, exact: true })).toHaveText('');
  }
  for (const name of ['New conversation', 'Close chat']) {
    await expect(p.getByRole('button', { name, exact: true }).locator('svg.pw-svg')).toHaveCount(1);
  }
  await thumbs.getByRole('button', { name: 'Not helpful' }).click();
  await expect(thumbs.getByRole('button', { name: 'Not helpful' })).toHaveAttribute('aria-pressed', 'true');
  await answer.getByLabel('What was missing? (optional)').fill('Nothing about Mars');
  await answer.getByRole('button', { name: 'Send feedback' }).click();
  await expect(answer.getByText('Thanks for your feedback.')).toBeVisible();
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

  // The owner keeps a saved reply for this agent.
  const admin = await signIn(browser, ADMIN);
  await admin.getByRole('link', { name: 'Saved replies', exact: true }).click();
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  await admin.getByLabel('Shortcut (typed after /)').fill('mars');
  const saved = 'We deliver on Earth and to the Moon; Mars is not served yet.';
  await admin.getByLabel('Reply', { exact: true }).fill(saved);
  await admin.getByRole('button', { name: 'Save reply' }).click();
  await expect(admin.locator('#saved-replies')).toContainText('/mars');

  // They see the question among the unanswered ones and open its conversation.
  await admin.getByRole('link', { name: 'Unanswered', exact: true }).click();
  const row = admin.locator('#unanswered tbody tr').filter({ hasText: question });
  await expect(row).toContainText('rated not helpful');
  await row.getByRole('link', { name: '#1' }).click();
  await expect(admin.locator('.c-rating-down')).toContainText('Nothing about Mars');

  // They take over and answer with the saved reply: / opens the list, Enter inserts it.
  await admin.getByRole('button', { name: 'Take over' }).click();
  const box = admin.getByLabel('Your reply to the visitor');
  await box.pressSequentially('/ma');
  const option = admin.getByRole('option').filter({ hasText: '/mars' });
  await expect(option).toHaveAttribute('aria-selected', 'true');
  await box.press('Enter');
  await expect(box).toHaveValue(saved);
  await admin.getByRole('button', { name: 'Send' }).click();
  await expect(p.locator('.pw-msg.pw-operator').filter({ hasText: 'Mars is not served yet' })).toBeVisible();

  // The reply, edited, becomes an article of the agent's knowledge, titled by the question.
  const reply = admin.locator('.c-msg-operator').filter({ hasText: 'Mars is not served yet' });
  await reply.getByRole('button', { name: 'Save as article' }).click();
  await expect(reply.getByLabel('Article title')).toHaveValue(question);
  await reply.getByLabel('Article title').fill('Deliveries to Mars');
  await reply.getByLabel(/Article text/).fill('We deliver on Earth and to the Moon. Mars is not served yet.');
  await reply.getByRole('button', { name: 'Save article' }).click();
  await expect(reply.getByRole('status')).toContainText('Saved as an article');
  await reply.getByRole('link', { name: 'Open it' }).click();
  await expect(admin.getByRole('heading', { name: 'Edit article' })).toBeVisible();
  await expect(admin.getByLabel('Title')).toHaveValue('Deliveries to Mars');
  expect(errors).toEqual([]);
  await admin.context().close();
});
