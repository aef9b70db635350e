// Every page of the console and of the OAuth sign-in, in a real browser (Debian's Chromium through
// playwright-core), at desktop (1280×860) and phone (390×844) sizes, light and dark: a store with
// memories of every state (active, superseded, forgotten, near duplicates, tags), a waiting
// approval, a token and an OAuth client, so that each page shows what it has to show. Each page
// must fit its screen (no horizontal overflow), every control must have an accessible name, no
// request may leave the origin, and the browser may log no error; a full-page screenshot of each
// is kept in the artifacts directory (printed; OWNSONA_E2E_ARTIFACTS chooses it), to be looked at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OWNER, PASSWORD, defer, payload, startServe } from './helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const ARTIFACTS = join(process.env.OWNSONA_E2E_ARTIFACTS || mkdtempSync(join(tmpdir(), 'ownsona-pages-')), 'pages');
mkdirSync(ARTIFACTS, { recursive: true });
console.log(`pages e2e: screenshots in ${ARTIFACTS}`);

// unlabelled lists the visible form controls and buttons that have no accessible name: no
// <label>, aria-label, aria-labelledby or title for an input, no text for a button.
function unlabelled() {
  const out = [];
  for (const el of document.querySelectorAll('input, select, textarea, button')) {
    if (el.type === 'hidden' || el.closest('[hidden]')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const byLabel = el.labels && [...el.labels].some((l) => l.textContent.trim() !== '');
    const byAria = (el.getAttribute('aria-label') || '').trim() !== '' || (el.getAttribute('title') || '').trim() !== '';
    const byRef = (el.getAttribute('aria-labelledby') || '').split(/\s+/).some((id) => id && document.getElementById(id)?.textContent.trim());
    const byText = el.tagName === 'BUTTON' && el.textContent.trim() !== '';
    if (!byLabel && !byAria && !byRef && !byText) out.push(el.outerHTML.slice(0, 120));
  }
  return out;
}

const SIZES = [
  { name: 'desktop-light', width: 1280, height: 860, colorScheme: 'light' },
  { name: 'desktop-dark', width: 1280, height: 860, colorScheme: 'dark' },
  { name: 'phone-light', width: 390, height: 844, colorScheme: 'light' },
  { name: 'phone-dark', width: 390, height: 844, colorScheme: 'dark' },
];

test('every console page and the OAuth sign-in, at two sizes, light and dark', { timeout: 240000 }, async (t) => {
  const srv = await startServe(t, { pats: { assistant: undefined } }); // approval: hard-delete by default
  const client = new Client({ name: 'e2e-pages', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${srv.tokens.assistant}` } } }));
  defer(t, () => client.close());

  const ids = {};
  for (const [key, text, tags] of [
    ['son', 'My son lives in Los Angeles and works as a nurse', ['family']],
    ['coffee', 'I take my coffee black, no sugar', ['food', 'preferences']],
    ['daughter', 'My daughter studies chemistry in Lisbon', ['family']],
    ['car', 'The car is due for a service in March', ['car']],
    ['office', 'My office is in Building 4', ['work']],
    ['dup', 'I take my coffee black with no sugar', ['food']],
    ['dentist', 'Dentist appointment on 14 January at 9:30', ['health']],
  ]) {
    const p = await payload(client, 'remember', { text, tags, dedup_policy: 'insert' });
    assert.equal(p.ok, true, JSON.stringify(p));
    ids[key] = p.memory_id;
  }
  const moved = await payload(client, 'remember', { text: 'My office is in Building 7 since the move', tags: ['work'], supersedes: [ids.office] });
  assert.equal(moved.ok, true, JSON.stringify(moved));
  ids.moved = moved.memory_id;
  assert.equal((await payload(client, 'forget', { id: ids.car, reason: 'sold the car' })).ok, true);
  // A hard delete waits for the owner: the Approvals page has one to show.
  const waiting = payload(client, 'forget', { id: ids.dentist, hard_delete: true });

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30000 });
  defer(t, () => browser.close());

  for (const size of SIZES) {
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: size.colorScheme });
    context.setDefaultTimeout(20000);
    const page = await context.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (r) => { const u = new URL(r.url()); if (u.protocol !== 'data:' && u.origin !== srv.origin) problems.push(`foreign request: ${r.url()}`); });
    const dir = join(ARTIFACTS, size.name);
    mkdirSync(dir, { recursive: true });
    let shot = 0;
    const look = async (name) => {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= size.width, `${size.name} ${name}: the page is ${width} px wide on a ${size.width} px screen`);
      assert.deepEqual(await page.evaluate(unlabelled), [], `${size.name} ${name}: controls without an accessible name`);
      await page.screenshot({ path: join(dir, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
    };

    await page.goto(`${srv.origin}/console`);
    await look('console-sign-in');
    await page.getByLabel('Username').fill(OWNER);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForURL((u) => u.pathname === '/console/memories'), page.getByRole('button', { name: /sign in/i }).click()]);
    await look('memories');
    await page.goto(`${srv.origin}/console/memories?q=${encodeURIComponent('what coffee do I drink?')}`);
    await look('search');
    for (const [name, id] of [['memory', ids.son], ['memory-superseded', ids.office], ['memory-forgotten', ids.car]]) {
      await page.goto(`${srv.origin}/console/memories/${id}`);
      await look(name);
    }
    for (const name of ['trash', 'review', 'connections', 'approvals', 'activity', 'settings', 'system']) {
      await page.goto(`${srv.origin}/console/${name}`);
      if (name === 'approvals') {
        for (let i = 0; i < 50 && await page.getByRole('button', { name: /^Approve forget/ }).count() === 0; i++) {
          await page.waitForTimeout(200);
          await page.reload();
        }
      }
      await look(name);
    }
    // The OAuth pages a connector shows the owner: the sign-in, then the consent.
    const reg = await fetch(`${srv.origin}/oauth/register`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Pages e2e', redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
    });
    assert.equal(reg.status, 201);
    const { client_id: clientID } = await reg.json();
    const authz = new URL(`${srv.origin}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientID, redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'x', resource: srv.url, scope: 'memories:read memories:write' })) {
      authz.searchParams.set(k, v);
    }
    await page.context().clearCookies();
    await page.goto(authz.href);
    await look('oauth-sign-in');
    await page.getByLabel('Username').fill(OWNER);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.getByRole('button', { name: /allow/i }).waitFor();
    await look('oauth-consent');

    assert.deepEqual(problems, [], `${size.name}: browser errors or foreign requests`);
    await context.close();
  }

  // Let the waiting hard delete end: deny it from a fresh console session.
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${srv.origin}/console`);
  await page.getByLabel('Username').fill(OWNER);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => u.pathname === '/console/memories'), page.getByLabel('Password').press('Enter')]);
  await page.goto(`${srv.origin}/console/approvals`);
  await page.getByRole('button', { name: /^Deny forget/ }).first().click();
  const denied = await waiting;
  assert.equal(denied.error?.code, 'APPROVAL_REJECTED', JSON.stringify(denied));
  await ctx.close();
});
