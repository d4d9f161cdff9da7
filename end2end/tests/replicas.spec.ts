import { expect, test, type Browser, type Page } from '@playwright/test';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ask, launcher, panel, panelBox, send, signIn } from './helpers';

// Two replicas on one fresh PostgreSQL database behind a real nginx (round-robin, no buffering),
// as docs/deploy.md deploys them: the widget streams through nginx, and a console on either
// replica takes the conversation over, whichever replica served the visitor. ./test.sh sets
// PARLEY_E2E_POSTGRES (the server's own suite is the SQLite one in playwright.config.ts).

const PG = process.env.PARLEY_E2E_POSTGRES ?? '';
const bin = process.env.PARLEY_E2E_BIN ?? path.resolve(__dirname, '../../target/release/parley');
const siteRoot = process.env.PARLEY_E2E_SITE_ROOT ?? path.resolve(__dirname, '../../target/site');
const widgetDir = process.env.PARLEY_E2E_WIDGET_DIR ?? path.resolve(__dirname, '../../target/widget');
const OLIVE = { email: 'olive@replicas.test', password: 'replicas-operator-password' };

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function healthy(url: string, what: string, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not start:\n${log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test.describe('two replicas behind nginx', () => {
  test.skip(!PG, 'needs PostgreSQL: set PARLEY_E2E_POSTGRES (./test.sh does)');

  const children: ChildProcess[] = [];
  let dir = '';
  let db = '';
  let lb = '';
  let host = '';
  const replicas: string[] = [];

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-replicas-'));
    db = `parley_e2e_${process.pid}_${Date.now()}`;
    execFileSync('psql', [PG, '-qc', `CREATE DATABASE ${db}`]);
    const url = PG.replace(/\/[^/]*$/, `/${db}`);
    const [lbPort, hostPort, aPort, bPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lb = `http://127.0.0.1:${lbPort}`;
    host = `http://127.0.0.1:${hostPort}`;
    const env = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: url,
      PARLEY_DATA_DIR: dir,
      PARLEY_PUBLIC_URL: lb,
      PARLEY_SITE_ROOT: siteRoot,
      PARLEY_WIDGET_DIR: widgetDir,
      LEPTOS_ENV: 'PROD',
      PARLEY_DEMO_TOKEN_DELAY_MS: '40',
      PARLEY_TRUSTED_PROXIES: '127.0.0.1',
      PARLEY_SIGNIN_PER_IP_PER_MINUTE: '600',
      PARLEY_SIGNIN_PER_EMAIL_PER_MINUTE: '600',
      PARLEY_LIMIT_VISITORS_PER_IP: '0',
      PARLEY_LIMIT_SENDS_PER_IP: '0',
      PARLEY_EXCHANGE_RATE_BASE_URL: 'http://127.0.0.1:9',
      RUST_LOG: 'warn',
    };
    execFileSync(bin, ['create-user', '--email', OLIVE.email, '--name', 'Olive', '--role', 'operator', '--password', OLIVE.password], { env });
    // The first replica seeds the demo agents (and serves the demo host page); then the second.
    for (const [i, port] of [aPort, bPort].entries()) {
      const log = path.join(dir, `replica-${i}.log`);
      const out = fs.openSync(log, 'w');
      const extra: Record<string, string> = i === 0 ? { PARLEY_DEMO_HOST_ADDR: `127.0.0.1:${hostPort}` } : {};
      const child = spawn(bin, ['serve'], { env: { ...env, ...extra, PARLEY_ADDR: `127.0.0.1:${port}` }, stdio: ['ignore', out, out] });
      children.push(child);
      replicas.push(`http://127.0.0.1:${port}`);
      await healthy(replicas[i], `replica ${i}`, () => fs.readFileSync(log, 'utf8'));
    }
    const ndir = path.join(dir, 'nginx');
    fs.mkdirSync(ndir);
    const root = process.getuid?.() === 0;
    fs.writeFileSync(
      path.join(ndir, 'nginx.conf'),
      `${root ? 'user root;\n' : ''}worker_processes 1;
pid ${ndir}/nginx.pid;
error_log ${ndir}/error.log warn;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${ndir}/client_body;
  proxy_temp_path ${ndir}/proxy;
  fastcgi_temp_path ${ndir}/fastcgi;
  uwsgi_temp_path ${ndir}/uwsgi;
  scgi_temp_path ${ndir}/scgi;
  upstream parley { ${replicas.map((r) => `server ${r.replace('http://', '')};`).join(' ')} }
  server {
    listen 127.0.0.1:${lbPort};
    location / {
      proxy_pass http://parley;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
    }
  }
}
`,
    );
    const nginx = spawn('/usr/sbin/nginx', ['-p', ndir, '-e', path.join(ndir, 'error.log'), '-c', path.join(ndir, 'nginx.conf')], {
      stdio: 'ignore',
    });
    children.push(nginx);
    await healthy(lb, 'nginx', () => fs.readFileSync(path.join(ndir, 'error.log'), 'utf8'));
  });

  test.afterAll(async () => {
    // By PID: nginx's master stops its worker; the replicas drain and exit.
    for (const child of children.reverse()) {
      child.kill(child.spawnfile.endsWith('nginx') ? 'SIGQUIT' : 'SIGTERM');
    }
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
    if (db) execFileSync('psql', [PG, '-qc', `DROP DATABASE IF EXISTS ${db}`]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A console on `base`, in the (only) conversation of this fresh database, taken over. */
  async function takeOver(browser: Browser, base: string): Promise<Page> {
    const op = await signIn(browser, OLIVE, base);
    await op.getByRole('link', { name: 'Conversations', exact: true }).click();
    await op.locator('#conversations tbody tr').first().getByRole('link').click();
    await op.getByRole('button', { name: 'Take over' }).click();
    await expect(op.locator('.c-badge-human')).toBeVisible();
    return op;
  }

  test('the widget streams through nginx and a console on either replica takes over', async ({ page, browser }) => {
    test.setTimeout(120_000);
    await page.goto(host);
    await expect(launcher(page)).toBeVisible();
    await launcher(page).click();
    await expect(panelBox(page)).toHaveClass(/(^|\s)o(\s|$)/);
    const p = panel(page);
    await expect(p.locator('.pw-panel')).toBeVisible();

    // The answer streams through nginx: several lengths of it are seen before it completes.
    const assistants = p.locator('.pw-msg.pw-assistant');
    const before = await assistants.count();
    await send(p, 'How do refunds work?');
    const answer = assistants.nth(before);
    await expect(answer).toHaveAttribute('data-status', 'streaming');
    const lengths = new Set<number>();
    await expect
      .poll(async () => {
        lengths.add(((await answer.textContent()) ?? '').length);
        return answer.getAttribute('data-status');
      }, { timeout: 30_000, intervals: [50] })
      .toBe('complete');
    expect(lengths.size, 'text grew in several steps').toBeGreaterThan(2);

    // The console of each replica in turn takes the conversation over and writes to the visitor.
    for (const [i, base] of replicas.entries()) {
      const op = await takeOver(browser, base);
      await expect(p.locator('.pw-msg').filter({ hasText: 'A person has joined the conversation.' }).nth(i)).toBeVisible();
      const reply = `Olive on replica ${i} here.`;
      await op.getByLabel('Your reply to the visitor').fill(reply);
      await op.getByRole('button', { name: 'Send' }).click();
      await expect(p.locator('.pw-msg.pw-operator').filter({ hasText: reply })).toBeVisible();
      // The visitor's answer reaches the console, and the model stays silent.
      const answered = await assistants.count();
      await send(p, `Thanks, replica ${i}!`);
      await expect(op.locator('.c-msg-visitor').filter({ hasText: `Thanks, replica ${i}!` })).toBeVisible();
      await expect(assistants).toHaveCount(answered);
      // Handed back, the bot answers again (through nginx).
      await op.getByRole('button', { name: 'Hand back to the bot' }).click();
      await expect(op.locator('.c-badge-bot')).toBeVisible();
      await ask(p, 'Hello again');
      await op.context().close();
    }
  });
});
