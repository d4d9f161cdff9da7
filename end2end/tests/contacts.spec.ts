import { expect, test, type Browser, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

/** A new visitor (own browser) who asks `question` and leaves a lead named `name`. */
async function visitorWithLead(browser: Browser, question: string, name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await trackPanelReady(page);
  await gotoHost(page);
  const p = await openWithLauncher(page);
  const answer = await ask(p, question);
  await answer.locator('button.pw-escalate').click();
  const form = p.locator('form.pw-lead');
  await form.locator('input[name="name"]').fill(name);
  await form.locator('input[name="email"]').fill(`${name.replace(/\W+/g, '.').toLowerCase()}@example.com`);
  await form.locator('textarea[name="message"]').fill('Please call me.');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(form).toHaveCount(0);
  return page;
}

async function seriousViolations(page: Page) {
  const axe = await new AxeBuilder({ page }).analyze();
  return axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

// Issue 43, part 5: an operator finds a visitor's contact, sees their browser and history,
// names them, and merges a second contact of the same person into it; at 390 px too.
test('a contact is found, shows its browser and conversation, is renamed, and takes in another contact', async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const stamp = Date.now();
  await visitorWithLead(browser, `Can I talk to a real person about parcel ${stamp}?`, `Laptop ${stamp}`);
  await visitorWithLead(browser, `Can I talk to a real person about late parcel ${stamp}?`, `Phone ${stamp}`);
  const admin = await signIn(browser);
  const errors = collectErrors(admin);

  await admin.getByRole('link', { name: 'Contacts', exact: true }).click();
  await admin.getByLabel('Name, email, phone or id').fill(`Laptop ${stamp}`);
  await admin.getByRole('button', { name: 'Find' }).click();
  await expect(admin.locator('#contacts tbody tr')).toHaveCount(1);
  await admin.locator('#contacts').getByRole('link', { name: `Laptop ${stamp}` }).click();
  await expect(admin.locator('#contact-name')).toHaveText(`Laptop ${stamp}`);
  await expect(admin.locator('#contact-browsers')).toContainText('Chrome');
  await expect(admin.locator('#contact-conversations tbody tr')).toHaveCount(1);
  await expect(admin.locator('#contact-leads')).toContainText('Please call me.');
  expect(await seriousViolations(admin)).toEqual([]);

  // Operators name the contact: shown before what the form said.
  await admin.getByLabel('Name', { exact: true }).fill(`Renamed ${stamp}`);
  await admin.getByRole('button', { name: 'Save details' }).click();
  await expect(admin.locator('#contact-name')).toHaveText(`Renamed ${stamp}`);

  // The phone's contact merges into this one: both conversations show here.
  await admin.getByLabel('Name, email, phone or id of the other contact').fill(`Phone ${stamp}`);
  await admin.locator('#merge-form').getByRole('button', { name: 'Find' }).click();
  const candidate = admin.locator('#merge-candidates li', { hasText: `Phone ${stamp}` });
  await expect(candidate).toHaveCount(1);
  admin.once('dialog', (d) => d.accept());
  await candidate.getByRole('button', { name: 'Merge into this contact' }).click();
  await expect(admin.locator('#contact-merged')).toContainText(`Phone ${stamp}`);
  await expect(admin.locator('#contact-conversations tbody tr')).toHaveCount(2);

  // The conversation's page links to its contact; the list names the visitor as operators did.
  await admin.locator('#contact-conversations').getByRole('link').first().click();
  await expect(admin.locator('.c-conv-head h1')).toContainText(`Renamed ${stamp}`);
  await admin.getByRole('link', { name: 'Contact', exact: true }).click();
  await expect(admin.locator('#contact-name')).toHaveText(`Renamed ${stamp}`);

  // At a phone's width the page fits and stays axe-clean.
  await admin.setViewportSize({ width: 390, height: 844 });
  const overflow = await admin.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  expect(await seriousViolations(admin)).toEqual([]);
  expect(errors).toEqual([]);
});
