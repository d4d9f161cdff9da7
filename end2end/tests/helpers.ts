import { expect, type FrameLocator, type Locator, type Page } from '@playwright/test';

/** The Parley app (widget iframe, API); set by playwright.config.ts. */
export const APP_URL = process.env.PARLEY_E2E_APP_URL ?? 'http://127.0.0.1:3100';
/** The pretend customer website on another origin that embeds the widget. */
export const DEMO_HOST_URL = process.env.PARLEY_E2E_DEMO_HOST_URL ?? 'http://127.0.0.1:3101';

/** The agent colour of the seeded `demo-help` agent (#4f46e5). */
export const AGENT_COLOR = 'rgb(79, 70, 229)';

export const GREETING = /help-center assistant/;
export const ESCALATION_ANSWER = /I've let our team know\. Press Talk to a person/;

declare global {
  interface Window {
    __parleyReady?: number;
    __parleySamples?: { t: number; len: number; status: string | null; assistants: number; stop: boolean }[];
  }
}

/**
 * Counts `parley:ready` messages the panel (hydrated, in the app-origin iframe) posts to the host
 * page. Must be called before `page.goto`.
 */
export async function trackPanelReady(page: Page): Promise<void> {
  await page.addInitScript(
    ({ app, host }) => {
      if (location.origin !== host) return; // only the host page, not the iframe
      window.__parleyReady = 0;
      window.addEventListener('message', (e) => {
        if (e.origin === app && e.data && e.data.type === 'parley:ready') {
          window.__parleyReady = (window.__parleyReady ?? 0) + 1;
        }
      });
    },
    { app: APP_URL, host: DEMO_HOST_URL },
  );
}

/** Collects uncaught errors and console errors from the page and all its frames. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Browsers ask every origin for /favicon.ico; the demo pages have none, which is fine.
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) errors.push(`console.error (${m.location().url}): ${m.text()}`);
  });
  page.on('crash', () => errors.push('page crashed'));
  return errors;
}

export function launcher(page: Page): Locator {
  return page.locator('div[data-parley] button.l');
}

export function panelBox(page: Page): Locator {
  return page.locator('div[data-parley] .b');
}

export function iframe(page: Page): Locator {
  return page.locator('div[data-parley] iframe');
}

export function panel(page: Page): FrameLocator {
  return page.frameLocator('div[data-parley] iframe');
}

/** Loads a demo host page and waits for the launcher. */
export async function gotoHost(page: Page, path = '/'): Promise<void> {
  await page.goto(DEMO_HOST_URL + path);
  await expect(launcher(page)).toBeVisible();
}

/** Number of `parley:ready` messages seen by the host page so far. */
export async function readyCount(page: Page): Promise<number> {
  return page.evaluate(() => window.__parleyReady ?? -1);
}

/** Opens the widget with the launcher and waits until the panel has hydrated. */
export async function openWithLauncher(page: Page): Promise<FrameLocator> {
  await launcher(page).click();
  return waitForPanel(page);
}

/** Waits until the open panel is visible and has told the host it is ready (hydrated). */
export async function waitForPanel(page: Page): Promise<FrameLocator> {
  await expect(panelBox(page)).toHaveClass(/(^|\s)o(\s|$)/);
  const p = panel(page);
  await expect(p.locator('.pw-panel')).toBeVisible();
  await expect.poll(() => readyCount(page), { message: 'panel hydrated (parley:ready)' }).toBeGreaterThan(0);
  return p;
}

/** Types a message, presses Enter and waits for the visitor bubble. */
export async function send(p: FrameLocator, text: string): Promise<void> {
  const visitors = p.locator('.pw-msg.pw-visitor');
  const before = await visitors.count();
  const input = p.locator('textarea.pw-input');
  await input.fill(text);
  await input.press('Enter');
  await expect(visitors).toHaveCount(before + 1);
  await expect(visitors.nth(before).locator('.pw-bubble')).toHaveText(text);
  await expect(input).toHaveValue('');
}

/**
 * Waits until no answer is being written (the Stop button is gone, Send is back). The panel's
 * labels follow the agent's greeting: pass `ZH_SEND` for an agent that greets in Chinese.
 */
export async function waitIdle(p: FrameLocator, sendLabel = 'Send'): Promise<void> {
  await expect(p.locator('.pw-msg[data-status="streaming"]')).toHaveCount(0);
  await expect(p.locator('button.pw-send')).toHaveText(sendLabel);
  await expect(p.locator('button.pw-send')).toBeEnabled();
}

/** The Send button's label in a Chinese panel (the immigration demo agent greets in Chinese). */
export const ZH_SEND = '发送';

/** The greeting of the seeded `demo-immigration` agent. */
export const IMMIGRATION_GREETING = /香港移民咨询助手/;

/**
 * Sends a message and waits for the whole answer: a new assistant message that ends `complete`,
 * and the panel idle again. Returns the answer's message element.
 */
export async function ask(
  p: FrameLocator,
  text: string,
  { sendLabel = 'Send', timeout = 30_000 }: { sendLabel?: string; timeout?: number } = {},
): Promise<Locator> {
  const assistants = p.locator('.pw-msg.pw-assistant');
  const before = await assistants.count();
  await send(p, text);
  await expect(assistants).toHaveCount(before + 1, { timeout });
  const answer = assistants.nth(before);
  await expect(answer).toHaveAttribute('data-status', 'complete', { timeout });
  await expect(p.locator('.pw-msg[data-status="streaming"]')).toHaveCount(0, { timeout });
  await waitIdle(p, sendLabel);
  return answer;
}

/** A new browser context signed in to the console (the dashboard is shown). */
export async function signIn(
  browser: import('@playwright/test').Browser,
  who: { email: string; password: string } = { email: 'admin@e2e.test', password: 'e2e-admin-password' },
  base: string = APP_URL,
): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/admin/login`);
  // Signed in by the hydrated form: wait for the console's bundle first.
  await page.waitForLoadState('networkidle');
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  return page;
}

/** Opens the console's form for a new trigger of the Help Center agent. */
export async function newTriggerForm(admin: Page): Promise<Locator> {
  await admin.goto(`${APP_URL}/admin/engage`);
  await admin.waitForLoadState('networkidle');
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  await admin.getByRole('button', { name: 'New trigger' }).click();
  return admin.locator('#trigger-form');
}

/** Writes a trigger through the console's form (the page is signed in as an administrator). */
export async function writeTrigger(
  admin: Page,
  t: { name: string; url: string; seconds: string; message: string; buttons: string[] },
): Promise<void> {
  const form = await newTriggerForm(admin);
  await form.getByLabel(/^Name/).fill(t.name);
  await form.getByLabel("The page's address").selectOption('is');
  await form.getByLabel(/^Address, path/).fill(t.url);
  await form.getByLabel('Seconds on the page').fill(t.seconds);
  await form.getByLabel('Message', { exact: true }).fill(t.message);
  for (const [i, b] of t.buttons.entries()) await form.locator(`#t-button${i + 1}`).fill(b);
  await form.getByRole('button', { name: 'Save trigger' }).click();
  await expect(admin.locator(`tr[data-trigger="${t.name}"]`)).toBeVisible();
}

/** Removes a trigger of the Help Center agent through the console (signed in as an administrator). */
export async function removeTrigger(admin: Page, name: string): Promise<void> {
  await admin.goto(`${APP_URL}/admin/engage`);
  await admin.waitForLoadState('networkidle');
  await admin.getByLabel('Agent').selectOption({ label: 'Parley Help Center' });
  admin.once('dialog', (d) => d.accept());
  await admin.locator(`tr[data-trigger="${name}"]`).getByRole('button', { name: /^Remove/ }).click();
  await expect(admin.locator(`tr[data-trigger="${name}"]`)).toHaveCount(0);
}
