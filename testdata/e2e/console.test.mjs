// End-to-end in a real browser: Debian's headless Chromium, driven by playwright-core, uses the
// owner's console at /console as a person would, next to MCP clients on the same server: signs in
// (by keyboard), sees a memory stored over MCP, searches by meaning, edits tags, forgets and
// restores, creates a token and uses it over MCP, revokes it (401), reads the activity log,
// downloads a backup that `ownsona check` accepts, and signs out. At desktop (1280×860, light) and
// phone (390×844, dark) sizes, with screenshots kept in an artifacts directory (its path is
// printed; OWNSONA_E2E_ARTIFACTS chooses it). The run fails on any request to another origin, on
// any console error or CSP violation, and on a page wider than the screen. Elements are found by
// role and label, never by our ids or classes (E2E-NOTES.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, OWNER, PASSWORD, defer, payload, startServe, tempDir } from './helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const ARTIFACTS = process.env.OWNSONA_E2E_ARTIFACTS || mkdtempSync(join(tmpdir(), 'ownsona-console-artifacts-'));
mkdirSync(ARTIFACTS, { recursive: true });
console.log(`console e2e: screenshots and downloads in ${ARTIFACTS}`);

// mcpClient connects the TypeScript SDK to the server with a bearer token.
async function mcpClient(t, srv, token) {
  const client = new Client({ name: 'e2e-console', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  defer(t, () => client.close());
  return client;
}

// rawCall posts one tools/call to /mcp with token and returns the HTTP status.
async function rawCall(srv, token) {
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_memories', arguments: {} } }),
    signal: AbortSignal.timeout(10000),
  });
  await res.body?.cancel();
  return res.status;
}

for (const size of [
  { name: 'desktop', width: 1280, height: 860, colorScheme: 'light', background: 'rgb(244, 244, 245)' },
  { name: 'phone', width: 390, height: 844, colorScheme: 'dark', background: 'rgb(17, 17, 20)' },
]) {
  test(`console (${size.name} ${size.width}×${size.height}, ${size.colorScheme}): sign in, see, search, edit, forget and restore, tokens, activity, backup`, { timeout: 120000 }, async (t) => {
    const srv = await startServe(t, { pats: { assistant: undefined } });
    const assistant = await mcpClient(t, srv, srv.tokens.assistant);
    const stored = {};
    for (const [key, text, tags] of [
      ['son', 'My son lives in Los Angeles', ['family']],
      ['coffee', 'I take my coffee black', ['food']],
      ['daughter', 'My daughter studies chemistry in Lisbon', ['family']],
      ['car', 'The car is due for a service in March', []],
    ]) {
      const p = await payload(assistant, 'remember', { text, tags });
      assert.equal(p.ok, true, JSON.stringify(p));
      stored[key] = p.memory_id;
    }

    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`);
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30000 });
    defer(t, () => browser.close());
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: size.colorScheme, acceptDownloads: true });
    defer(t, () => context.close());
    context.setDefaultTimeout(15000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.origin });
    const page = await context.newPage();
    const problems = [];
    const foreign = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.protocol !== 'data:' && u.origin !== srv.origin) foreign.push(r.url());
    });
    const dir = join(ARTIFACTS, size.name);
    mkdirSync(dir, { recursive: true });
    let shot = 0;
    // look checks the page fits the screen and keeps a screenshot of it.
    const look = async (name) => {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= size.width, `${name}: the page is ${width} px wide on a ${size.width} px screen`);
      await page.screenshot({ path: join(dir, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
    };
    const nav = (name) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
    const flash = () => page.getByRole('status').first();

    // Signing in, by keyboard.
    const first = await page.goto(`${srv.origin}/console`);
    assert.equal(first.status(), 200);
    const h = await first.allHeaders();
    assert.match(h['content-security-policy'], /default-src 'self'/);
    assert.match(h['content-security-policy'], /frame-ancestors 'none'/);
    assert.doesNotMatch(h['content-security-policy'], /unsafe-inline|unsafe-eval/);
    assert.equal(h['x-frame-options'], 'DENY');
    assert.equal(h['x-content-type-options'], 'nosniff');
    assert.equal(h['referrer-policy'], 'no-referrer');
    assert.match(h['cache-control'], /no-store/);
    assert.equal(await page.title(), 'Sign in · ownsona');
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), size.background, `the ${size.colorScheme} colours apply`);
    await look('sign-in');
    await page.getByLabel('Username').focus();
    await page.keyboard.type(OWNER);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await Promise.all([page.waitForURL((u) => u.pathname === '/console/memories'), page.keyboard.press('Enter')]);
    const cookie = (await context.cookies(srv.origin)).find((c) => c.name === 'ownsona_console');
    assert.ok(cookie, 'the console session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');

    // The memory stored over MCP, newest first.
    assert.equal(await page.title(), 'Memories · ownsona');
    await page.getByRole('link', { name: 'My son lives in Los Angeles' }).waitFor();
    const boxes = page.getByRole('checkbox', { name: /^Select memory \d+$/ });
    assert.equal(await boxes.count(), 4);
    assert.equal(await boxes.first().getAttribute('aria-label'), `Select memory ${stored.car}`, 'newest first');
    await look('memories');

    // Search by meaning: the son's memory ranks first.
    await page.getByRole('searchbox', { name: 'Search memories' }).fill('where does my son live?');
    await Promise.all([page.waitForURL((u) => u.searchParams.get('q') === 'where does my son live?'), page.getByRole('button', { name: 'Search', exact: true }).click()]);
    assert.equal(await page.getByRole('checkbox', { name: /^Select memory \d+$/ }).first().getAttribute('aria-label'), `Select memory ${stored.son}`);
    assert.match(await page.getByRole('heading', { level: 2 }).first().innerText(), /^Results/);
    await look('search');

    // Edit the tags.
    await Promise.all([page.waitForURL((u) => u.pathname === `/console/memories/${stored.son}`), page.getByRole('link', { name: 'My son lives in Los Angeles' }).click()]);
    await page.getByText('Edit', { exact: true }).click(); // the form opens below the memory, shown once
    await page.getByLabel(/^Tags/).fill('family, kids, Los Angeles');
    await Promise.all([page.waitForURL((u) => u.pathname === `/console/memories/${stored.son}`), page.getByRole('button', { name: 'Save changes' }).click()]);
    assert.equal(await flash().innerText(), 'Saved (tags).');
    let got = await payload(assistant, 'get_memory', { id: stored.son });
    assert.deepEqual(got.memory.tags, ['family', 'child', 'los-angeles'], 'the edit is what MCP clients read');
    await look('memory-edited');

    // Forget, then restore.
    await page.getByRole('button', { name: 'Forget', exact: true }).click();
    await page.getByRole('button', { name: 'Restore' }).waitFor();
    assert.match(await flash().innerText(), /is forgotten/);
    got = await payload(assistant, 'get_memory', { id: stored.son });
    assert.ok(got.memory.deleted_at, 'forgotten for MCP clients too');
    await look('memory-forgotten');
    await page.getByRole('link', { name: 'Trash' }).click();
    await page.getByRole('checkbox', { name: `Select memory ${stored.son}` }).waitFor();
    await look('trash');
    await page.getByRole('link', { name: 'My son lives in Los Angeles' }).click();
    await page.getByRole('button', { name: 'Restore' }).click();
    await page.getByText('Edit', { exact: true }).waitFor();
    assert.match(await flash().innerText(), /is restored/);
    got = await payload(assistant, 'get_memory', { id: stored.son });
    assert.equal(got.memory.deleted_at, undefined, 'restored for MCP clients too');

    // Bulk: tag two memories from the list.
    await nav('Memories').click();
    await page.getByRole('checkbox', { name: `Select memory ${stored.coffee}` }).check();
    await page.getByRole('checkbox', { name: `Select memory ${stored.car}` }).check();
    assert.equal(await page.getByRole('group', { name: /With the selected memories/ }).getByText('(2 selected)').count(), 1, 'the bar counts the selection');
    await page.getByLabel('Tag to add').fill('errands');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.getByText('2 memories tagged errands.').waitFor();

    // Review.
    await nav('Review').click();
    await page.getByRole('heading', { name: 'Near duplicates' }).waitFor();
    await look('review');

    // A token, created after the password again, shown once, used over MCP, revoked.
    await nav('Connections').click();
    await page.getByLabel(/^Name/).fill('e2e-console');
    await page.getByLabel('Read and write memories').check();
    await page.getByLabel(/^Your password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByLabel('Token', { exact: true });
    const token = await shown.inputValue();
    assert.match(token, /^osk_[A-Za-z0-9_-]{20,}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token, 'the copy button copies the token');
    await look('token-created');
    const scripted = await mcpClient(t, srv, token);
    const wrote = await payload(scripted, 'remember', { text: 'Written with a token made in the console' });
    assert.equal(wrote.ok, true, JSON.stringify(wrote));
    await page.reload();
    assert.equal(await page.getByLabel('Token', { exact: true }).count(), 0, 'the token is shown only once');
    await page.getByRole('button', { name: 'Revoke the token e2e-console' }).click();
    await page.getByText('The token e2e-console is revoked').waitFor();
    assert.equal(await rawCall(srv, token), 401, 'the revoked token is refused');
    assert.equal(await rawCall(srv, srv.tokens.assistant), 200, 'other tokens still work');

    // The activity log shows the calls, the refusal and the console's own changes.
    await nav('Activity').click();
    const log = page.getByRole('table', { name: /Requests to your memories/ });
    await log.waitFor();
    const text = await log.innerText();
    for (const want of ['pat:e2e-console', 'remember', 'unauthorized', 'pat:assistant', 'console/update', 'console/create_token']) {
      assert.ok(text.includes(want), `the activity log lacks ${want}:\n${text}`);
    }
    await look('activity');

    // System, and a backup that ownsona check accepts.
    await nav('System').click();
    await page.getByText('Healthy', { exact: true }).waitFor();
    await look('system');
    await page.getByLabel(/^Your password/).fill(PASSWORD); // the file holds the keys: the password again (CO-01)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download a backup now' }).click()]);
    assert.match(download.suggestedFilename(), /^ownsona-\d{8}T\d{6}Z\.db$/);
    const saved = join(tempDir(t), download.suggestedFilename());
    await download.saveAs(saved);
    assert.ok(statSync(saved).size >= 4 * 4096, 'the backup is a database file');
    const check = spawnSync(BIN, ['check', saved], { encoding: 'utf8', timeout: 20000 });
    assert.equal(check.status, 0, `ownsona check of the downloaded backup:\n${check.stdout}\n${check.stderr}`);

    // Sign out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.goto(`${srv.origin}/console/memories`);
    assert.equal(new URL(page.url()).pathname, '/console/signin', 'signed out: the console asks to sign in again');

    assert.deepEqual(foreign, [], 'no request leaves the origin');
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
}

test('console: approve a waiting hard delete, deny another, and change the allowlist an assistant sees', { timeout: 120000 }, async (t) => {
  const srv = await startServe(t, { pats: { assistant: undefined } }); // OWNSONA_APPROVAL: hard-delete by default
  const assistant = await mcpClient(t, srv, srv.tokens.assistant);
  let toolsChanged = 0;
  assistant.setNotificationHandler(ToolListChangedNotificationSchema, () => { toolsChanged++; });
  const ids = [];
  for (const text of ['The old alarm code was 4417', 'The gate key hangs by the stairs']) {
    const p = await payload(assistant, 'remember', { text });
    assert.equal(p.ok, true, JSON.stringify(p));
    ids.push(p.memory_id);
  }
  // Two hard deletes: each waits for the owner (this client cannot be asked: no elicitation).
  const approved = payload(assistant, 'forget', { id: ids[0], hard_delete: true });
  const denied = payload(assistant, 'forget', { id: ids[1], hard_delete: true });

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30000 });
  defer(t, () => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  defer(t, () => context.close());
  context.setDefaultTimeout(15000);
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (new URL(r.url()).origin !== srv.origin) problems.push(`foreign request: ${r.url()}`); });

  await page.goto(`${srv.origin}/console`);
  await page.getByLabel('Username').fill(OWNER);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => u.pathname === '/console/memories'), page.getByLabel('Password').press('Enter')]);
  const nav = page.getByRole('navigation', { name: 'Console' });
  await nav.getByRole('link', { name: /Approvals/ }).click();
  await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
  // Both calls are listed once they reach the queue.
  for (let i = 0; i < 50 && await page.getByRole('button', { name: /^Approve forget/ }).count() < 2; i++) {
    await page.waitForTimeout(200);
    await page.getByRole('link', { name: 'Refresh' }).click();
  }
  await page.getByRole('button', { name: new RegExp(`^Approve forget: Forget memory ${ids[0]} `) }).click();
  await page.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
  await page.getByRole('button', { name: new RegExp(`^Deny forget: Forget memory ${ids[1]} `) }).click();
  await page.getByRole('status').filter({ hasText: 'Denied' }).waitFor();

  const yes = await approved;
  assert.equal(yes.ok, true, JSON.stringify(yes));
  const no = await denied;
  assert.equal(no.ok, false, JSON.stringify(no));
  assert.equal(no.error.code, 'APPROVAL_REJECTED');
  assert.equal(no.isError, true);
  assert.equal((await payload(assistant, 'get_memory', { id: ids[0] })).error?.code, 'NOT_FOUND', 'the approved hard delete ran');
  assert.equal((await payload(assistant, 'get_memory', { id: ids[1] })).ok, true, 'the denied one changed nothing');

  // Settings: take forget away from assistants.
  await nav.getByRole('link', { name: 'Settings', exact: true }).click();
  await page.getByRole('checkbox', { name: /^forget (?!.*batch)/ }).uncheck(); // 'forget' and its title
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
  const names = (await assistant.listTools()).tools.map((x) => x.name);
  assert.ok(!names.includes('forget') && names.includes('forget_batch') && names.includes('remember'), `tools after the save: ${names}`);
  for (let i = 0; i < 50 && toolsChanged === 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(toolsChanged > 0, 'the connected client got notifications/tools/list_changed');
  assert.deepEqual(problems, []);
});
