// End-to-end in a real browser: Debian's headless Chromium, driven by playwright-core, signs in on
// ownsona's OAuth login page and allows a client on the consent page, and is sent back to the
// client's loopback redirect URI with a code. The client then exchanges the code with its PKCE
// verifier and calls a tool with the access token. This is what catches what fetch cannot: the
// pages' Content-Security-Policy (inline styles, form-action through the 303 to the redirect
// URI), cookies as a browser keeps them (HttpOnly, SameSite=Lax), and same-origin form posts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OWNER, PASSWORD, defer, payload, startServe, tempDir } from './helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

// callbackServer is the client's loopback redirect URI: it records each request's URL and
// answers a small page.
async function callbackServer(t) {
  const hits = [];
  let notify;
  const first = new Promise((resolve) => { notify = resolve; });
  const server = createServer((req, res) => {
    const url = new URL(req.url, `http://${req.headers.host}`);
    if (url.pathname !== '/callback') { // the browser's /favicon.ico
      res.writeHead(404).end();
      return;
    }
    hits.push(url);
    notify(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><link rel="icon" href="data:,"><title>Signed in</title><p id="done">You can close this window.</p>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(t, () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { redirectUri: `http://127.0.0.1:${server.address().port}/callback`, host: `127.0.0.1:${server.address().port}`, hits, first };
}

async function launch(t) {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  const profile = tempDir(t, 'ownsona-chromium-'); // a fresh user data dir, removed after the browser closes
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30000 });
  defer(t, () => context.close());
  context.setDefaultTimeout(15000);
  context.setDefaultNavigationTimeout(15000);
  return context;
}

test('browser: Chromium signs in, allows the client, and is sent back with a code the client exchanges', { timeout: 90000 }, async (t) => {
  const srv = await startServe(t);
  const cb = await callbackServer(t);
  const clientName = 'Playwright Chromium e2e';

  const reg = await fetch(`${srv.origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // A registration body like real MCP hosts send (see E2E-NOTES.md).
    body: JSON.stringify({
      client_name: clientName, redirect_uris: [cb.redirectUri], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native',
      software_id: 'ownsona-e2e-browser', software_version: '1.0.0', client_uri: 'https://example.com/e2e', scope: '',
    }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(reg.status, 201);
  const client = await reg.json();
  assert.equal(client.client_name, clientName);
  assert.deepEqual(client.redirect_uris, [cb.redirectUri]);

  const verifier = randomBytes(48).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL('/oauth/authorize', srv.origin);
  authorize.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: cb.redirectUri, state,
    code_challenge: challenge, code_challenge_method: 'S256', scope: 'memories:read memories:write', resource: srv.url,
  }).toString();

  const context = await launch(t);
  const page = context.pages()[0] ?? await context.newPage();
  const problems = []; // console errors (CSP violations show up here) and failed page loads
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  const documents = [];
  page.on('response', (r) => { if (r.request().isNavigationRequest()) documents.push(r); });

  // The login page.
  const login = await page.goto(authorize.href);
  assert.equal(login.status(), 200);
  const h = await login.allHeaders();
  assert.match(h['content-security-policy'], /frame-ancestors 'none'/);
  assert.match(h['content-security-policy'], /default-src 'none'/);
  assert.equal(h['x-frame-options'], 'DENY');
  assert.match(h['cache-control'], /no-store/);
  assert.equal(h['x-content-type-options'], 'nosniff');
  assert.equal(h['referrer-policy'], 'no-referrer');
  assert.equal(await page.title(), 'Sign in · ownsona');
  assert.match(await page.locator('main').innerText(), new RegExp(`${clientName} wants to connect`));
  // The inline stylesheet applies (the CSP allows it): the page background is not the default white.
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(244, 244, 245)');

  await page.getByLabel('Username').fill(OWNER);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/oauth/continue'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  const cookies = await context.cookies(srv.origin);
  const session = cookies.find((c) => c.name === 'ownsona_session');
  assert.ok(session, 'the login set the session cookie');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Lax');

  // The consent page: it names the client and shows where access goes.
  assert.equal(await page.title(), 'Allow access? · ownsona');
  assert.match(await page.locator('h1').innerText(), new RegExp(`Allow ${clientName} to use your memories\\?`));
  assert.equal((await page.locator('.host').innerText()).trim(), cb.host);
  const consentText = await page.locator('main').innerText();
  assert.match(consentText, /memories:read/);
  assert.match(consentText, /memories:write/);
  const consentDoc = documents.at(-1);
  assert.equal(consentDoc.status(), 200);
  const ch = await consentDoc.allHeaders();
  assert.match(ch['content-security-policy'], /frame-ancestors 'none'/);
  assert.match(ch['content-security-policy'], new RegExp(`form-action 'self' http://${cb.host.replace(/\./g, '\\.')}`), 'the CSP lets the Allow form redirect to the client');
  assert.equal(ch['x-frame-options'], 'DENY');
  assert.match(ch['cache-control'], /no-store/);

  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(cb.redirectUri)),
    page.getByRole('button', { name: 'Allow' }).click(),
  ]);
  await page.locator('#done').waitFor();
  const back = new URL(page.url());
  assert.equal(back.origin + back.pathname, cb.redirectUri);
  const code = back.searchParams.get('code');
  assert.match(code ?? '', /^\S{20,}$/, 'a code');
  assert.equal(back.searchParams.get('state'), state);
  assert.equal(back.searchParams.get('iss'), srv.issuer, 'RFC 9207 iss is the issuer, byte for byte');
  const hit = await cb.first;
  assert.equal(cb.hits.length, 1, 'the redirect URI was loaded once');
  assert.equal(hit.searchParams.get('code'), code);
  assert.equal(hit.searchParams.get('state'), state);
  assert.deepEqual(problems, [], 'no console errors or CSP violations on the way');

  // The client's side: the code exchange with the PKCE verifier.
  const tokenReq = (params) => fetch(`${srv.origin}/oauth/token`, { method: 'POST', body: new URLSearchParams(params), signal: AbortSignal.timeout(10000) });
  const wrong = await tokenReq({ grant_type: 'authorization_code', code, code_verifier: randomBytes(48).toString('base64url'), client_id: client.client_id, redirect_uri: cb.redirectUri, resource: srv.url });
  assert.equal(wrong.status, 400, 'a wrong verifier is refused');
  assert.equal((await wrong.json()).error, 'invalid_grant');
  // A wrong verifier changes nothing: the rightful exchange still works (and a stolen code alone
  // is useless).
  const res = await tokenReq({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: client.client_id, redirect_uri: cb.redirectUri, resource: srv.url });
  const tokens = await res.json();
  assert.equal(res.status, 200, JSON.stringify(tokens));
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(tokens.token_type, 'Bearer');
  assert.equal(tokens.scope, 'memories:read memories:write');

  // A tool call with the access token, through the TypeScript SDK.
  const call = async (accessToken) => {
    const mcp = new Client({ name: 'e2e-browser', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }));
    try {
      return await payload(mcp, 'remember', { text: `Signed in with Chromium at ${Date.now()}` });
    } finally {
      await mcp.close();
    }
  };
  const saved = await call(tokens.access_token);
  assert.equal(saved.ok, true);

  // Refreshes as other real clients make them: without resource (the Go SDK), and two in parallel
  // with the same refresh token (hosted connectors, Claude Code's sessions). Both get the same
  // successor, already issued, and fresh access tokens that work; the successor refreshes again.
  const both = await Promise.all([1, 2].map(() => tokenReq({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id })));
  const fresh = await Promise.all(both.map(async (r) => ({ status: r.status, body: await r.json() })));
  for (const f of fresh) assert.equal(f.status, 200, JSON.stringify(f.body));
  assert.equal(fresh[0].body.refresh_token, fresh[1].body.refresh_token, 'a racing refresh gets the successor already issued');
  assert.notEqual(fresh[0].body.refresh_token, tokens.refresh_token);
  assert.notEqual(fresh[0].body.access_token, fresh[1].body.access_token);
  for (const f of fresh) {
    assert.equal(f.body.scope, 'memories:read memories:write');
    assert.equal((await call(f.body.access_token)).ok, true);
  }
  const next = await tokenReq({ grant_type: 'refresh_token', refresh_token: fresh[0].body.refresh_token, client_id: client.client_id });
  assert.equal(next.status, 200, 'the shared successor refreshes again');
});

test('browser: a wrong password shows the login page again with an error, and Deny sends access_denied', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const cb = await callbackServer(t);
  const reg = await fetch(`${srv.origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Denied e2e', redirect_uris: [cb.redirectUri], token_endpoint_auth_method: 'none' }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(reg.status, 201);
  const client = await reg.json();
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL('/oauth/authorize', srv.origin);
  authorize.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: cb.redirectUri, state,
    code_challenge: createHash('sha256').update('v'.repeat(64)).digest('base64url'), code_challenge_method: 'S256',
  }).toString();

  const context = await launch(t);
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(authorize.href);
  await page.getByLabel('Username').fill(OWNER);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Wrong username or password.').waitFor();
  assert.equal(await page.title(), 'Sign in · ownsona');
  assert.equal((await context.cookies(srv.origin)).find((c) => c.name === 'ownsona_session'), undefined, 'no session after a failed login');

  await page.getByLabel('Username').fill(OWNER);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => u.pathname === '/oauth/continue'), page.getByRole('button', { name: 'Sign in' }).click()]);
  assert.equal(await page.title(), 'Allow access? · ownsona');
  await Promise.all([page.waitForURL((u) => u.href.startsWith(cb.redirectUri)), page.getByRole('button', { name: 'Deny' }).click()]);
  const back = new URL(page.url());
  assert.equal(back.searchParams.get('error'), 'access_denied');
  assert.equal(back.searchParams.get('code'), null);
  assert.equal(back.searchParams.get('state'), state);
  assert.equal(back.searchParams.get('iss'), srv.issuer);
});
