import { defineConfig, devices } from '@playwright/test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where the app (widget iframe, API) and the pretend customer website (another origin) listen. */
export const APP_ADDR = '127.0.0.1:3100';
export const DEMO_HOST_ADDR = '127.0.0.1:3101';
export const APP_URL = `http://${APP_ADDR}`;
export const DEMO_HOST_URL = `http://${DEMO_HOST_ADDR}`;
/** Console users created before the server starts (see `webServer`). */
export const ADMIN = { email: 'admin@e2e.test', password: 'e2e-admin-password' };
export const OPERATOR = { email: 'olive@e2e.test', password: 'e2e-operator-password' };
/** A second operator (the team inbox's two-operator spec). */
export const OSCAR = { email: 'oscar@e2e.test', password: 'e2e-oscar-password' };

// Tests read these (see tests/helpers.ts); worker processes inherit the environment.
process.env.PARLEY_E2E_APP_URL = APP_URL;
process.env.PARLEY_E2E_DEMO_HOST_URL = DEMO_HOST_URL;

const bin = process.env.PARLEY_E2E_BIN ?? path.resolve(__dirname, '../target/release/parley');
const siteRoot = process.env.PARLEY_E2E_SITE_ROOT ?? path.resolve(__dirname, '../target/site');
const widgetDir = process.env.PARLEY_E2E_WIDGET_DIR ?? path.resolve(__dirname, '../target/widget');
/** A real SMTP server beside Parley (aiosmtpd; mail.spec.ts reads what it received). */
const smtpSink = path.resolve(__dirname, '../server/tests/it/harness/smtp_sink.py');
const SMTP_PORT = 3125;
/** The test website knowledge-sources.spec.ts serves and crawls: the one private address the
 * server may fetch (PARLEY_PRIVATE_ENDPOINTS). */
export const SOURCES_SITE_PORT = 3130;
process.env.PARLEY_E2E_SOURCES_SITE_PORT = String(SOURCES_SITE_PORT);

// A fresh database for every run. The config is evaluated again in each worker process, so only
// the main process (the one that starts the web server) creates the directory.
let dataDir = process.env.PARLEY_E2E_RUN_DATA_DIR;
if (!dataDir) {
  const created = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-'));
  dataDir = process.env.PARLEY_E2E_RUN_DATA_DIR = created;
  // Playwright stops the web server before the runner exits; then the database can go.
  process.on('exit', () => fs.rmSync(created, { recursive: true, force: true }));
}

export default defineConfig({
  testDir: 'tests',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 30_000,
  // The whole run, so a stuck server or browser fails the suite instead of holding CI.
  globalTimeout: 25 * 60_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  reporter: 'list',
  outputDir: 'test-results',
  use: {
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        },
      },
    },
  ],
  webServer: {
    // Console users for the console tests, then the server (exec: Playwright stops it directly).
    command:
      `"${bin}" create-user --email ${ADMIN.email} --name "E2E Admin" --role admin --password "${ADMIN.password}" && ` +
      `"${bin}" create-user --email ${OPERATOR.email} --name Olive --role operator --password "${OPERATOR.password}" && ` +
      `"${bin}" create-user --email ${OSCAR.email} --name Oscar --role operator --password "${OSCAR.password}" && ` +
      // The SMTP sink runs in the server's process group (Playwright stops the group); without
      // aiosmtpd it is simply not there and mail.spec.ts skips.
      `(python3 "${smtpSink}" ${SMTP_PORT} "${dataDir}/mail.jsonl" >/dev/null 2>&1 &) && ` +
      `exec "${bin}" serve`,
    url: `${APP_URL}/healthz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      PARLEY_ADDR: APP_ADDR,
      PARLEY_DEMO_HOST_ADDR: DEMO_HOST_ADDR,
      PARLEY_DATA_DIR: dataDir,
      PARLEY_SITE_ROOT: siteRoot,
      PARLEY_WIDGET_DIR: widgetDir,
      LEPTOS_ENV: 'PROD',
      PARLEY_DEMO_TOKEN_DELAY_MS: process.env.PARLEY_E2E_TOKEN_DELAY_MS ?? '40',
      // As in the demo of ./run.sh: the sandbox payment provider (the payment test pays with it).
      PARLEY_PAYMENTS_SANDBOX: '1',
      RUST_LOG: process.env.RUST_LOG ?? 'info',
      // Every browser test signs in from 127.0.0.1: the per-IP sign-in limit is for strangers.
      PARLEY_SIGNIN_PER_IP_PER_MINUTE: '600',
      PARLEY_SIGNIN_PER_EMAIL_PER_MINUTE: '600',
      // No request leaves this machine: the live rate API is a closed local port, so the
      // reference table answers (as it would offline).
      PARLEY_EXCHANGE_RATE_BASE_URL: 'http://127.0.0.1:9',
      // Every test's browser comes from the same loopback address: the per-address rates would
      // count the whole suite as one client. Per-visitor limits stay as shipped.
      PARLEY_LIMIT_VISITORS_PER_IP: '0',
      PARLEY_LIMIT_SENDS_PER_IP: '0',
      PARLEY_TRANSCRIPTS_PER_IP_PER_DAY: '0',
      PARLEY_SMTP_HOST: '127.0.0.1',
      PARLEY_SMTP_PORT: String(SMTP_PORT),
      PARLEY_SMTP_TLS: 'none',
      PARLEY_MAIL_FROM: 'Parley <parley@e2e.test>',
      // Visitors who left (return-mail.spec.ts): gone after 2 s without a panel; their answers
      // come to Parley's own SMTP listener.
      PARLEY_RETURN_MAIL_AFTER_SECS: '2',
      PARLEY_INBOUND_MAIL_DOMAIN: 'in.e2e.test',
      PARLEY_INBOUND_SMTP_ADDR: '127.0.0.1:3126',
      // knowledge-sources.spec.ts crawls a site on this loopback port (nothing else private).
      PARLEY_PRIVATE_ENDPOINTS: `127.0.0.1:${SOURCES_SITE_PORT}`,
    },
  },
});
