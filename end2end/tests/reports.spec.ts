import AxeBuilder from '@axe-core/playwright';
import { APIRequestContext, expect, Page, test } from '@playwright/test';
import { APP_URL, collectErrors, signIn } from './helpers';

// Issue 45, part 1: an administrator opens the Reports page after a few visitors chatted with
// the offline demo model: the tiles count the conversations, the four charts draw with their axes
// and legends, each shows its figures as a table, the CSV export says what the tile says, an
// empty period says so (no NaN), a wrong filter is marked, and axe finds nothing.

const CHARTS = ['r-chart-volume', 'r-chart-rates', 'r-chart-handover', 'r-chart-spend'];

async function axeClean(page: Page) {
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`)).toEqual([]);
}

/** A new visitor of the demo agent says `message` through the public chat API and gets the answer. */
async function chat(request: APIRequestContext, message: string) {
  const visitor = await request.post(`${APP_URL}/api/v1/visitors`, { data: { agent: 'demo-help' } });
  expect(visitor.status()).toBe(201);
  const { token } = await visitor.json();
  const answer = await request.post(`${APP_URL}/api/v1/chat`, {
    headers: { authorization: `Bearer ${token}` },
    data: { agent: 'demo-help', message },
  });
  expect(answer.ok()).toBeTruthy();
  // The stream ends with the answer.
  expect(await answer.text()).toContain('message_end');
}

/** The conversations of the current period in the CSV export of the page's own query. */
async function csvConversations(page: Page): Promise<number> {
  const href = await page.locator('#r-csv').getAttribute('href');
  expect(href).toMatch(/^\/admin\/reports\.csv\?from=\d{4}-\d{2}-\d{2}&to=/);
  const response = await page.request.get(`${APP_URL}${href}`);
  expect(response.status()).toBe(200);
  const line = (await response.text()).match(/^summary,current,conversations,(\d+)\r?$/m);
  expect(line, 'the CSV has the summary line').toBeTruthy();
  return Number(line![1]);
}

test('reports: tiles, four charts with their tables, the CSV export, an empty period', async ({ browser, request }) => {
  test.setTimeout(120_000);
  await chat(request, 'Hello');
  await chat(request, 'What can you do?');
  await chat(request, 'Can I talk to a real person?');

  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  await admin.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Reports' }).click();
  await expect(admin.getByRole('heading', { name: 'Reports', level: 1 })).toBeVisible();
  await admin.goto(`${APP_URL}/admin/reports`);
  await admin.waitForLoadState('networkidle');

  // The filters: the last 30 days ending today, by day.
  const filters = admin.locator('#r-filters');
  await expect(admin.locator('#r-from')).toHaveValue(/^\d{4}-\d{2}-\d{2}$/);
  await expect(admin.locator('#r-to')).toHaveValue(/^\d{4}-\d{2}-\d{2}$/);
  await expect(admin.locator('#r-by')).toHaveValue('day');
  await expect(admin.locator('#r-time-zone')).not.toHaveValue('');
  await expect(admin.locator('#r-agent')).toContainText('All agents');

  // The conversations tile counts at least the three above, and the CSV says the same.
  const tile = admin.locator('#r-tiles [data-figure="conversations"]');
  await expect(tile.locator('.r-value')).toHaveText(/^\d+$/);
  await expect.poll(async () => Number(await tile.locator('.r-value').textContent())).toBeGreaterThanOrEqual(3);
  await expect(tile.locator('.r-prev')).toContainText('Period before');
  await expect
    .poll(async () => (await csvConversations(admin)) === Number(await tile.locator('.r-value').textContent()))
    .toBe(true);
  await expect(admin.locator('#r-tiles > li')).toHaveCount(14);
  await expect(admin.locator('#r-json')).toHaveAttribute('href', /^\/admin\/reports\.json\?from=/);

  // Each chart: an SVG image with its name, both axes with ticks, a legend, and its table.
  for (const id of CHARTS) {
    const chart = admin.locator(`#${id}`);
    const svg = chart.locator('svg[role="img"]');
    await expect(svg).toBeVisible();
    await expect(svg).toHaveAttribute('aria-labelledby', `${id}-title`);
    expect(await chart.locator('.r-axis-x text').count()).toBeGreaterThan(0);
    expect(await chart.locator('.r-axis-y text').count()).toBeGreaterThan(1);
    expect(await chart.locator('.r-legend li').count()).toBeGreaterThan(0);
    await expect(chart.locator('.r-summary')).not.toBeEmpty();

    const toggle = admin.locator(`#${id}-toggle`);
    const table = admin.locator(`#${id}-table`);
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await expect(table).toBeHidden();
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(toggle).toHaveAttribute('aria-pressed', 'true');
    await expect(table).toBeVisible();
    await expect(table.locator('caption')).not.toBeEmpty();
    expect(await table.locator('tbody tr').count()).toBeGreaterThan(0);
  }
  await expect(admin.locator('#r-chart-volume .r-legend')).toContainText('Conversations');
  await expect(admin.locator('#r-chart-handover .r-legend')).toContainText('Asked for a person');
  expect(await admin.locator('main').innerHTML()).not.toContain('NaN');
  await axeClean(admin);

  // A wrong time zone is marked next to its field.
  await admin.locator('#r-time-zone').fill('Mars/Olympus');
  await filters.getByRole('button', { name: 'Show the report' }).click();
  await expect(admin.locator('#err-time_zone')).toContainText('not a time zone');
  await axeClean(admin);

  // A period long before any conversation: it says so, the charts are empty, nothing is NaN.
  await admin.locator('#r-time-zone').fill('UTC');
  await admin.locator('#r-from').fill('2020-01-01');
  await admin.locator('#r-to').fill('2020-01-14');
  await admin.locator('#r-by').selectOption('week');
  await filters.getByRole('button', { name: 'Show the report' }).click();
  await expect(admin.locator('#r-empty')).toBeVisible();
  await expect(admin.locator('#err-time_zone')).toHaveCount(0);
  await expect(tile.locator('.r-value')).toHaveText('0');
  await expect(admin.locator('#r-csv')).toHaveAttribute('href', /from=2020-01-01&to=2020-01-14&time_zone=UTC&by=week/);
  expect(await csvConversations(admin)).toBe(0);
  for (const id of CHARTS) {
    await expect(admin.locator(`#${id} svg[role="img"]`)).toContainText('No data in this period');
  }
  expect(await admin.locator('main').innerHTML()).not.toContain('NaN');
  await axeClean(admin);
  // The refused filter answered 422, which the browser logs as a failed load.
  expect(errors.filter((e) => !e.includes('status of 422'))).toEqual([]);
});
