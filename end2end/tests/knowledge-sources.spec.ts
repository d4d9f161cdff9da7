import AxeBuilder from '@axe-core/playwright';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { APP_URL, ZH_SEND, ask, collectErrors, gotoHost, openWithLauncher, signIn, trackPanelReady } from './helpers';

/**
 * Knowledge sources (issue 42) from the console: a website crawled with its progress bar, its
 * pages and their passages, the widget answering from it with a citation; a question and answer
 * typed in; a PDF uploaded. The website is server/tests/site's `small` site ("Harborlight"),
 * served by nginx (or, without nginx, Python's http.server) on the port playwright.config.ts
 * lets the server reach (PARLEY_PRIVATE_ENDPOINTS).
 *
 * The sources go into the demo immigration agent's base (its agent searches its knowledge) and
 * are deleted at the end of each test (by afterEach when a test failed), so later specs see the
 * base as seeded.
 */

/** Set by playwright.config.ts (the port the server may fetch from). */
const SOURCES_SITE_PORT = Number(process.env.PARLEY_E2E_SOURCES_SITE_PORT ?? '3130');
const SITE = `http://127.0.0.1:${SOURCES_SITE_PORT}`;
const BASE_NAME = '香港移民知识库';
const MAKE_SITE = path.resolve(__dirname, '../../server/tests/site/make_site.py');

let dir = '';
let server: ChildProcess | null = null;

/** Resolves once something accepts connections on the site's port. */
async function listening(deadline: number, log: () => string): Promise<void> {
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(SOURCES_SITE_PORT, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`the test site did not start:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.beforeAll(async () => {
  test.setTimeout(60_000);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sources-'));
  execFileSync('python3', [MAKE_SITE, 'small', dir, '--base', SITE], { stdio: 'pipe' });
  const log = path.join(dir, 'error.log');
  if (fs.existsSync('/usr/sbin/nginx')) {
    const conf = fs
      .readFileSync(path.join(dir, 'nginx.conf.template'), 'utf8')
      .replaceAll('__DIR__', dir)
      .replaceAll('__PORT__', String(SOURCES_SITE_PORT));
    fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
    fs.mkdirSync(path.join(dir, 'tmp'));
    server = spawn('/usr/sbin/nginx', ['-p', `${dir}/`, '-e', log, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  } else {
    const out = fs.openSync(log, 'a');
    server = spawn('python3', ['-m', 'http.server', String(SOURCES_SITE_PORT), '--bind', '127.0.0.1', '--directory', path.join(dir, 'www')], {
      stdio: ['ignore', out, out],
    });
  }
  await listening(Date.now() + 15_000, () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''));
});

test.afterAll(async () => {
  // By PID: nginx's master stops its worker on QUIT.
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill(server.spawnfile.endsWith('nginx') ? 'SIGQUIT' : 'SIGTERM');
    await exited;
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Serious and critical violations axe finds in the page. */
async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Opens the sources of the immigration agent's base, hydrated. */
async function openSources(page: Page): Promise<void> {
  await page.goto(`${APP_URL}/admin/knowledge`);
  await page.locator('#bases tbody tr').filter({ hasText: BASE_NAME }).getByRole('link').click();
  await expect(page.getByRole('heading', { name: 'Articles' })).toBeVisible();
  await page.getByRole('link', { name: /^Sources/ }).click();
  await expect(page.getByRole('heading', { name: 'Sources', level: 1 })).toBeVisible();
  await page.waitForLoadState('networkidle');
}

/** Deletes the open source (its page) and comes back to the base's sources. */
async function deleteSource(page: Page, name: string): Promise<void> {
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: `Delete source: ${name}` }).click();
  await expect(page.getByRole('heading', { name: 'Sources', level: 1 })).toBeVisible();
  await expect(page.locator('#sources').getByRole('link', { name, exact: true })).toHaveCount(0);
}

/** Adds a website source from the base's sources and waits for its first run to be done. */
async function addWebsite(page: Page, name: string): Promise<void> {
  await page.getByLabel('Website name').fill(name);
  await page.getByLabel(/^Start URL/).fill(`${SITE}/index.html`);
  await page.getByLabel(/^Exclude patterns/).fill('/big.html');
  await page.getByLabel('Sync schedule').selectOption('weekly');
  await page.getByRole('button', { name: 'Add website' }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await expect(page.locator('#run-progress[data-state="done"]')).toBeVisible({ timeout: 60_000 });
}

// What a failed test left in the base goes, so that later specs see it as seeded.
test.afterEach(async ({ browser }) => {
  const admin = await signIn(browser);
  await openSources(admin);
  admin.on('dialog', (d) => d.accept());
  const deletes = admin.locator('#sources').getByRole('button', { name: /^Delete source: / });
  for (let left = await deletes.count(); left > 0; left--) {
    await deletes.first().click();
    await expect(deletes).toHaveCount(left - 1);
  }
  await admin.context().close();
});

test('a website: added, crawled with live progress, a page and its passages, then cited by the widget', async ({ browser, page }) => {
  test.setTimeout(120_000);
  const admin = await signIn(browser);
  const errors = collectErrors(admin);
  await openSources(admin);
  expect(await serious(admin)).toEqual([]);

  // Refused: a start URL that is not one; nothing is made.
  await admin.getByLabel('Website name').fill('Harborlight e2e');
  await admin.getByLabel(/^Start URL/).fill('not a url');
  await admin.getByRole('button', { name: 'Add website' }).click();
  await expect(admin.locator('#err-start_url')).toBeVisible();
  await expect(admin.locator('#sources').getByRole('link', { name: 'Harborlight e2e' })).toHaveCount(0);

  // Added: the source's page shows the first run's progress until it is done.
  await addWebsite(admin, 'Harborlight e2e');
  const progress = admin.locator('#run-progress');
  const bar = progress.getByRole('progressbar', { name: 'Run progress' });
  await expect(bar).toBeVisible();
  await expect(progress.getByRole('status')).toContainText('Done:');
  expect(await bar.getAttribute('value')).toBe(await bar.getAttribute('max'));
  await expect(progress).toContainText(/Indexed\s*[1-9]/);
  await expect(admin.locator('#run-history tbody tr').first()).toContainText('done');
  expect(await serious(admin)).toEqual([]);

  // Its settings change in place: a bad start URL is refused and changes nothing; a new name
  // and schedule are saved.
  const edit = admin.locator('#edit-website');
  await edit.getByText('Edit settings').click();
  await expect(edit.getByLabel('Website name')).toHaveValue('Harborlight e2e');
  await expect(edit.getByLabel(/^Exclude patterns/)).toHaveValue('/big.html');
  await edit.getByLabel(/^Start URL/).fill('not a url');
  await edit.getByRole('button', { name: 'Save settings' }).click();
  await expect(admin.locator('#err-start_url')).toBeVisible();
  await edit.getByLabel(/^Start URL/).fill(`${SITE}/index.html`);
  await edit.getByLabel('Sync schedule').selectOption('off');
  await edit.getByRole('button', { name: 'Save settings' }).click();
  await expect(admin.locator('dl.c-facts:not(.c-run-counts)')).toContainText(/Schedule\s*off/);
  expect(await serious(admin)).toEqual([]);

  // The start page, indexed, and its passages as the agent reads them, each citing the page.
  const home = `${SITE}/index.html`;
  const row = admin.locator('#pages tbody tr').filter({ has: admin.getByRole('link', { name: home, exact: true }) });
  await expect(row).toContainText('indexed');
  await row.getByRole('button', { name: /^Passages/ }).click();
  const passages = admin.locator('#passages');
  await expect(passages.getByRole('heading', { name: /^Passages of/ })).toBeVisible();
  await expect(passages).toContainText('founded in Rostock in 2011');
  // Each passage cites the page and scrolls to itself (a URL text fragment).
  const fragment = new RegExp(`^${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#:~:text=`);
  await expect(passages.getByRole('link', { name: home }).first()).toHaveAttribute('href', fragment);
  expect(await serious(admin)).toEqual([]);

  // The widget answers from the site and cites the page; the citation opens it.
  await trackPanelReady(page);
  await gotoHost(page, '/immigration');
  const p = await openWithLauncher(page);
  const answer = await ask(p, 'When was Harborlight founded, and where?', { sendLabel: ZH_SEND });
  const cite = answer.locator(`.pw-citations a[href^="${home}"]`).first();
  await expect(cite).toBeVisible();
  const [opened] = await Promise.all([page.context().waitForEvent('page'), cite.click()]);
  await opened.waitForLoadState();
  expect(opened.url()).toContain(home);
  await expect(opened.locator('body')).toContainText('founded in Rostock in 2011');

  // Exclude takes the page out of the index; Include again lets the next run fetch it.
  await row.getByRole('button', { name: /^Exclude/ }).click();
  await expect(row).toContainText('excluded');
  await admin.getByLabel('Status').selectOption('excluded');
  await row.getByRole('button', { name: /^Include again/ }).click();
  await expect(row).toHaveCount(0);

  await deleteSource(admin, 'Harborlight e2e');
  expect(errors.filter((e) => !/(add|update)_website\d*\): Failed to load resource/.test(e))).toEqual([]);
});

test('a website crawl follows robots.txt, its sitemaps and links', async ({ browser }) => {
  test.setTimeout(90_000);
  const admin = await signIn(browser);
  await openSources(admin);
  await addWebsite(admin, 'Harborlight scope e2e');
  const pages = admin.locator('#pages');
  await admin.getByLabel('Status').selectOption('indexed');
  for (const path of ['/pricing.html', '/docs/setup.html', '/docs/faq.html', '/blog/post.html']) {
    await expect(pages.getByRole('link', { name: `${SITE}${path}`, exact: true }), path).toBeVisible();
  }
  await admin.getByLabel('Status').selectOption('skipped');
  await expect(pages.locator('tbody tr').filter({ hasText: '/private/secret.html' })).toContainText('robots');
  await admin.getByLabel('Status').selectOption('indexed');
  const setup = pages.locator('tbody tr').filter({ has: admin.getByRole('link', { name: `${SITE}/docs/setup.html`, exact: true }) });
  await setup.getByRole('button', { name: /^Passages/ }).click();
  await expect(admin.locator('#passages')).toContainText('TCP port 7341');
  await deleteSource(admin, 'Harborlight scope e2e');
});

test('a question and its answer: added, listed as a snippet, deleted', async ({ browser }) => {
  test.setTimeout(60_000);
  const admin = await signIn(browser);
  await openSources(admin);
  // Refused: no answer.
  await admin.getByLabel('Question', { exact: true }).fill('Do ferries take bicycles e2e?');
  await admin.getByRole('button', { name: 'Add snippet' }).click();
  await expect(admin.locator('#err-answer')).toBeVisible();
  await admin.getByLabel('Answer', { exact: true }).fill('Yes: bicycles ride free on weekends.');
  await admin.getByRole('button', { name: 'Add snippet' }).click();
  await expect(admin.getByRole('status').filter({ hasText: 'Snippet added' })).toBeVisible();
  await admin.locator('#sources').getByRole('link', { name: 'Snippets', exact: true }).click();
  const row = admin.locator('#pages tbody tr').filter({ hasText: 'Do ferries take bicycles e2e?' });
  await row.getByRole('button', { name: /^Passages/ }).click();
  await expect(admin.locator('#passages')).toContainText('bicycles ride free on weekends');
  expect(await serious(admin)).toEqual([]);
  admin.once('dialog', (d) => d.accept());
  await row.getByRole('button', { name: /^Delete/ }).click();
  await expect(row).toHaveCount(0);
  await deleteSource(admin, 'Snippets');
});

test('an uploaded PDF is indexed and its passages are shown', async ({ browser }) => {
  test.setTimeout(60_000);
  // A one-page PDF made with fpdf2 (server/tests/site needs it too).
  const pdf = path.join(dir, 'handbook.pdf');
  execFileSync('python3', [
    '-c',
    'import sys\nfrom fpdf import FPDF\npdf = FPDF()\npdf.add_page()\npdf.set_font("Helvetica", size=12)\n' +
      'pdf.multi_cell(0, 8, "Harborlight handbook. Every new customer may borrow a spare deck radio for the first month.")\n' +
      'pdf.output(sys.argv[1])',
    pdf,
  ]);
  const admin = await signIn(browser);
  await openSources(admin);
  const results = admin.locator('#upload-results');
  // Over the console's limit of 10 MiB a file: refused in the browser, naming the file.
  await admin.getByLabel(/^Choose files/).setInputFiles({ name: 'huge.txt', mimeType: 'text/plain', buffer: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') });
  await expect(results).toContainText('huge.txt: larger than the limit of 10 MiB');
  await admin.getByLabel(/^Choose files/).setInputFiles(pdf);
  await expect(results.locator('li')).toHaveCount(1);
  await expect(results).toContainText(/handbook\.pdf: indexed, \d+ passages?/);
  await admin.locator('#sources').getByRole('link', { name: 'Files', exact: true }).click();
  const row = admin.locator('#pages tbody tr').filter({ hasText: 'handbook.pdf' });
  await row.getByRole('button', { name: /^Passages/ }).click();
  await expect(admin.locator('#passages')).toContainText('spare deck radio');
  await deleteSource(admin, 'Files');
});
