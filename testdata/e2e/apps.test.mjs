// End-to-end: ownsona's MCP App (io.modelcontextprotocol/ui) in Chromium, inside a small host
// page built on @modelcontextprotocol/ext-apps's AppBridge (apps/host.html, apps/host.mjs). The
// TypeScript SDK reads the ui:// resource that recall names from the real binary; the host page
// renders it in a sandboxed iframe, hands it a recall result and relays the app's tools/call to
// the server through the SDK client. The test then uses the page as a person would (by role and
// name) and checks on the server that each action called its tool: confirm, edit tags, forget;
// that a failed action (not found, no write scope, an approval the person declined) says why;
// that the host's dark theme and style variables apply; and that list_memories and an empty
// result render too.
// It fails on any request to another origin and on any console error, and keeps screenshots at
// desktop (1280×860) and phone (390×844) sizes in an artifacts directory (its path is printed;
// OWNSONA_E2E_ARTIFACTS chooses it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { getToolUiResourceUri, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';
import { defer, payload, startServe } from './helpers.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const UI_URI = 'ui://ownsona/memories.html';
const UI_EXTENSION = 'io.modelcontextprotocol/ui';

const ARTIFACTS = process.env.OWNSONA_E2E_ARTIFACTS || mkdtempSync(join(tmpdir(), 'ownsona-apps-artifacts-'));
mkdirSync(ARTIFACTS, { recursive: true });
console.log(`apps e2e: screenshots in ${ARTIFACTS}`);

// mcpClient connects the TypeScript SDK to the server with a bearer token, as a host that
// renders MCP Apps: it advertises the extension.
async function mcpClient(t, srv, token, name) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  defer(t, () => client.close());
  return client;
}

// staticServer serves the host page and, unbundled, the few ES modules its import map names from
// node_modules. It is the only origin the browser may talk to.
const TYPES = { '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };
const MODULES = ['@modelcontextprotocol/ext-apps/', '@modelcontextprotocol/client/', '@modelcontextprotocol/core/', 'zod/', 'eventsource/', 'eventsource-parser/', 'pkce-challenge/'];
async function staticServer(t) {
  const roots = { '/host.html': join(HERE, 'apps', 'host.html'), '/host.mjs': join(HERE, 'apps', 'host.mjs') };
  const served = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    served.push(path);
    let file = roots[path];
    if (!file && path.startsWith('/node_modules/') && MODULES.some((m) => path.slice('/node_modules/'.length).startsWith(m))) {
      const full = normalize(join(HERE, path));
      if (full.startsWith(join(HERE, 'node_modules') + sep)) file = full;
    }
    if (!file || !existsSync(file) || !statSync(file).isFile() || !TYPES[extname(file)]) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)], 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(t, () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { origin: `http://127.0.0.1:${server.address().port}`, served };
}

// luminance of a computed CSS colour (rgb()/rgba()), 0 (black) to 1 (white).
function luminance(css) {
  const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

// appResource checks that the server advertises the extension and that recall, search_memory and
// list_memories name the app, reads the ui:// resource, and returns {html, csp, tools}.
async function appResource(client) {
  const caps = client.getServerCapabilities();
  assert.ok(caps.extensions?.[UI_EXTENSION], `capabilities advertise ${UI_EXTENSION}: ${JSON.stringify(caps)}`);
  const { tools } = await client.listTools();
  for (const name of ['recall', 'search_memory', 'list_memories']) {
    const tool = tools.find((x) => x.name === name);
    assert.equal(getToolUiResourceUri(tool), UI_URI, `${name} names the app in _meta.ui.resourceUri`);
  }
  const read = await client.readResource({ uri: UI_URI });
  assert.equal(read.contents.length, 1);
  const resource = read.contents[0];
  assert.equal(resource.uri, UI_URI);
  assert.equal(resource.mimeType, RESOURCE_MIME_TYPE);
  const html = resource.text;
  assert.match(html, /^<!doctype html>/i);
  const csp = resource._meta?.ui?.csp ?? {};
  for (const k of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains']) {
    assert.equal((csp[k] ?? []).length, 0, `the app needs no other origin (${k})`);
  }
  assert.doesNotMatch(html, /\b(src|href)\s*=\s*["']?(https?:)?\/\//i, 'the page loads nothing from another origin');
  return { html, csp, tools };
}

// openHost starts Chromium on the host page at a screen size, mounts the app (html, csp) in it
// and relays the app's tool calls to relay.client (swap it to change who calls). It returns the
// page, the app's frame (a locator to find things in, and the Frame for computed styles), the
// calls relayed, look(name) for screenshots and done() for the origin and console checks.
async function openHost(t, { size, html, csp, tool, relay }) {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`);
  const web = await staticServer(t);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30000 });
  defer(t, () => browser.close());
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: 'light' });
  defer(t, () => context.close());
  context.setDefaultTimeout(15000);
  const page = await context.newPage();
  const problems = [];
  const foreign = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol !== 'data:' && u.origin !== web.origin) foreign.push(r.url());
  });

  // The relay: the app's tools/call, from the host page's AppBridge to the server.
  const calls = [];
  await page.exposeBinding('relayToolCall', async (source, params) => {
    assert.equal(source.frame, page.mainFrame(), 'only the host page relays tool calls, not the app');
    calls.push({ name: params.name, arguments: params.arguments });
    return relay.client.callTool({ name: params.name, arguments: params.arguments });
  });

  const res = await page.goto(`${web.origin}/host.html`);
  assert.equal(res.status(), 200);
  await page.waitForFunction(() => window.hostReady === true);
  const hostContext = {
    theme: 'light', displayMode: 'inline', availableDisplayModes: ['inline'], platform: 'web',
    locale: 'en-US', timeZone: 'UTC', containerDimensions: { maxHeight: 2000, width: Math.min(size.width, 760) - 32 },
    toolInfo: { id: 7, tool },
  };
  const mounted = await page.evaluate((args) => window.host.mount(args), { html, csp, hostContext, title: 'ownsona memories' });
  assert.equal(mounted.appInfo?.name, 'ownsona-memories', 'the app introduced itself in ui/initialize');
  const app = page.frameLocator('iframe[title="ownsona memories"]');
  const appFrame = page.frames().find((f) => f !== page.mainFrame());
  assert.ok(appFrame, 'the app frame');

  const dir = join(ARTIFACTS, size.name);
  mkdirSync(dir, { recursive: true });
  let shot = 0;
  // look waits for the host to fit its frame to the app's content, checks the page fits the
  // screen and keeps a screenshot.
  const look = async (name) => {
    const want = await appFrame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
      const root = document.documentElement;
      const before = root.style.height;
      root.style.height = 'max-content';
      const h = Math.ceil(root.getBoundingClientRect().height);
      root.style.height = before;
      resolve(h);
    }))));
    await page.waitForFunction((h) => Math.abs(document.querySelector('iframe').getBoundingClientRect().height - h) <= 1, want);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= size.width, `${name}: the host page is ${width} px wide on a ${size.width} px screen`);
    await page.screenshot({ path: join(dir, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
  const done = () => {
    assert.deepEqual(foreign, [], 'no request to another origin');
    assert.deepEqual(problems, [], 'no console errors or failed requests');
    assert.ok(web.served.includes('/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js'), 'the host ran the ext-apps AppBridge');
  };
  return { page, app, appFrame, calls, look, done };
}

for (const size of [
  { name: 'desktop', width: 1280, height: 860 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`apps (${size.name} ${size.width}×${size.height}): the memories app renders recall in a host, and confirm, edit tags and forget call the tools`, { timeout: 120000 }, async (t) => {
    const srv = await startServe(t, { pats: { host: undefined, reader: 'memories:read' }, env: { OWNSONA_APPROVAL: 'off' } });
    const client = await mcpClient(t, srv, srv.tokens.host, 'ownsona-apps-e2e');
    const reader = await mcpClient(t, srv, srv.tokens.reader, 'ownsona-apps-e2e-reader');

    const { html, csp, tools } = await appResource(client);

    // Memories to show. last_confirmed_at in the past, so a confirm is visible.
    const longAgo = '2024-01-15T09:30:00Z';
    const stored = {};
    for (const [key, text, tags] of [
      ['coffee', 'I prefer dark roast coffee, black, in the morning', ['food', 'coffee']],
      ['tea', 'Green tea after lunch, never coffee after 3pm', ['food']],
      ['markup', 'Coffee shop idea: <b>bold</b> & <script>alert(1)</script> stays text', ['ideas']],
      ['colby', 'My son Colby lives in Los Angeles', ['family']],
    ]) {
      const p = await payload(client, 'remember', { text, tags, source_provider: 'e2e', last_confirmed_at: longAgo, dedup_policy: 'insert' });
      assert.equal(p.ok, true, JSON.stringify(p));
      stored[key] = p.memory_id;
    }
    const recallArgs = { query: 'coffee', limit: 8 };
    const recallResult = await client.callTool({ name: 'recall', arguments: recallArgs });
    const matches = recallResult.structuredContent.matches;
    for (const key of ['coffee', 'tea', 'markup']) assert.ok(matches.some((m) => m.id === stored[key]), `recall finds ${key}`);
    const coffee = matches.find((m) => m.id === stored.coffee);

    // The browser, the host page and the app in it.
    const relay = { client };
    const { page, app, appFrame, calls, look, done } = await openHost(t, { size, html, csp, tool: tools.find((x) => x.name === 'recall'), relay });

    // The tool's input, then its result: the cards show text, tags, dates and source.
    await page.evaluate((args) => window.host.sendToolInput(args), recallArgs);
    await page.evaluate((r) => window.host.sendToolResult(r), recallResult);
    await app.getByRole('heading', { name: 'Recalled memories' }).waitFor();
    await app.getByText(`${matches.length} matches for “coffee”`).waitFor();
    const cardOf = (id) => app.getByRole('article', { name: `Memory ${id}` });
    const coffeeCard = cardOf(stored.coffee);
    await coffeeCard.getByText('I prefer dark roast coffee, black, in the morning').waitFor();
    assert.deepEqual(await coffeeCard.getByRole('list', { name: 'Tags' }).getByRole('listitem').allInnerTexts(), coffee.tags);
    assert.match(await coffeeCard.innerText(), /Source\s*e2e/);
    assert.match(await coffeeCard.innerText(), /Last confirmed\s*Jan 15, 2024, 9:30\s?AM/, 'dates in the host locale and time zone');
    assert.match(await coffeeCard.innerText(), /Score\s*\d\.\d\d/);
    // Text that looks like markup stays text.
    const markupCard = cardOf(stored.markup);
    await markupCard.getByText('Coffee shop idea: <b>bold</b> & <script>alert(1)</script> stays text').waitFor();
    assert.equal(await appFrame.evaluate(() => document.querySelectorAll('main b, main script').length), 0, 'no element came from memory text');
    // The host fitted its frame to the app's size.
    const sizes = await page.evaluate(() => window.host.sizes());
    assert.ok(sizes.length > 0 && sizes.at(-1).height > 200, `size-changed reported: ${JSON.stringify(sizes)}`);
    const lightBg = await appFrame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.ok(luminance(lightBg) > 0.8, `light theme background ${lightBg}`);
    await look('recall-light');

    // Confirm: the tool runs and the card shows the new date.
    const before = (await payload(client, 'get_memory', { id: stored.coffee })).memory;
    assert.equal(Date.parse(before.last_confirmed_at), Date.parse(longAgo));
    await coffeeCard.getByRole('button', { name: 'Confirm' }).click();
    await coffeeCard.getByRole('status').getByText(`Confirmed memory ${stored.coffee}.`).waitFor();
    assert.deepEqual(calls.at(-1), { name: 'confirm', arguments: { id: stored.coffee } });
    const confirmed = (await payload(client, 'get_memory', { id: stored.coffee })).memory;
    assert.ok(Date.parse(confirmed.last_confirmed_at) > Date.parse(longAgo), `last_confirmed_at moved: ${confirmed.last_confirmed_at}`);
    assert.doesNotMatch(await coffeeCard.innerText(), /Jan 15, 2024/);

    // Edit tags, by keyboard: the input has a label, Enter saves; the card shows what was stored.
    await coffeeCard.getByRole('button', { name: 'Edit tags' }).click();
    const tagsInput = coffeeCard.getByRole('textbox', { name: /tags/i });
    assert.equal(await tagsInput.inputValue(), coffee.tags.join(', '));
    await tagsInput.fill('food, Morning Routine');
    await tagsInput.press('Enter');
    await coffeeCard.getByRole('status').getByText(/Saved the tags/).waitFor();
    const updateCall = calls.find((c) => c.name === 'update_memory');
    assert.deepEqual(updateCall, { name: 'update_memory', arguments: { id: stored.coffee, tags: ['food', 'Morning Routine'] } });
    const retagged = (await payload(client, 'get_memory', { id: stored.coffee })).memory;
    assert.deepEqual([...retagged.tags].sort(), ['food', 'morning-routine']);
    assert.deepEqual((await coffeeCard.getByRole('list', { name: 'Tags' }).getByRole('listitem').allInnerTexts()).sort(), ['food', 'morning-routine']);
    // Cancel leaves the tags alone.
    await coffeeCard.getByRole('button', { name: 'Edit tags' }).click();
    await coffeeCard.getByRole('textbox', { name: /tags/i }).fill('nothing-saved');
    await coffeeCard.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await coffeeCard.getByRole('textbox', { name: /tags/i }).count(), 0);
    assert.deepEqual([...(await payload(client, 'get_memory', { id: stored.coffee })).memory.tags].sort(), ['food', 'morning-routine']);

    // Forget asks first; "Keep it" keeps it; "Yes, forget" soft-deletes it.
    const teaCard = cardOf(stored.tea);
    await teaCard.getByRole('button', { name: 'Forget' }).click();
    await teaCard.getByText('Forget this memory?').waitFor();
    assert.equal(calls.filter((c) => c.name === 'forget').length, 0, 'nothing forgotten before the answer');
    await look('forget-ask');
    await teaCard.getByRole('button', { name: 'Keep it' }).click();
    await teaCard.getByRole('button', { name: 'Forget' }).waitFor();
    // By keyboard: Enter asks, Escape takes the question back and returns to Forget.
    await teaCard.getByRole('button', { name: 'Forget' }).focus();
    await page.keyboard.press('Enter');
    await teaCard.getByText('Forget this memory?').waitFor();
    await page.keyboard.press('Escape');
    await teaCard.getByRole('button', { name: 'Forget' }).waitFor();
    assert.equal(await appFrame.evaluate(() => document.activeElement?.textContent), 'Forget', 'focus is back on Forget');
    assert.equal((await payload(client, 'get_memory', { id: stored.tea })).memory.deleted_at, undefined);
    await teaCard.getByRole('button', { name: 'Forget' }).click();
    await teaCard.getByRole('button', { name: 'Yes, forget' }).click();
    await teaCard.getByRole('status').getByText(`Forgot memory ${stored.tea}.`).waitFor();
    assert.deepEqual(calls.at(-1), { name: 'forget', arguments: { id: stored.tea, reason: 'forgotten from the chat' } });
    const told = await page.evaluate(() => window.host.modelContext());
    assert.match(told.at(-1)?.content?.[0]?.text ?? '', new RegExp(`confirmed memory ${stored.coffee}.*set the tags of memory ${stored.coffee} to food, morning-routine.*forgot memory ${stored.tea}`), 'the model is told what the person did');
    const forgotten = (await payload(client, 'get_memory', { id: stored.tea })).memory;
    assert.ok(forgotten.deleted_at, 'soft-deleted');
    assert.equal(forgotten.forget_reason, 'forgotten from the chat');
    assert.equal(await teaCard.getByRole('button').count(), 0, 'a forgotten card has no actions');

    // A failed action says why, from the tool's payload: the memory is gone meanwhile.
    const hard = await payload(client, 'forget', { id: stored.markup, hard_delete: true });
    assert.equal(hard.ok, true, JSON.stringify(hard));
    await markupCard.getByRole('button', { name: 'Confirm' }).click();
    await markupCard.getByRole('status').getByText(new RegExp(`Could not confirm memory ${stored.markup}: .*NOT_FOUND`)).waitFor();
    // And without the scope: a read-only connection cannot confirm, and the app says so.
    relay.client = reader;
    await coffeeCard.getByRole('button', { name: 'Confirm' }).click();
    await coffeeCard.getByRole('status').getByText(new RegExp(`Could not confirm memory ${stored.coffee}: .*scope`, 'i')).waitFor();
    relay.client = client;
    await look('actions');

    // Dark: the host says so, and the app's colours follow.
    await page.evaluate(() => window.host.setHostContext({ theme: 'dark' }));
    await appFrame.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'dark');
    const darkBg = await appFrame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const darkText = await appFrame.evaluate(() => getComputedStyle(document.body).color);
    assert.ok(luminance(darkBg) < 0.2, `dark theme background ${darkBg}`);
    assert.ok(luminance(darkText) > 0.7, `dark theme text ${darkText}`);
    await look('recall-dark');

    // The host's own style variables win over the app's.
    await page.evaluate(() => window.host.setHostContext({ styles: { variables: { '--color-background-primary': 'rgb(10, 20, 40)' } } }));
    await appFrame.waitForFunction(() => getComputedStyle(document.body).backgroundColor === 'rgb(10, 20, 40)');

    // list_memories: another result in the same frame; the forgotten ones are not there.
    const listResult = await client.callTool({ name: 'list_memories', arguments: {} });
    await page.evaluate(() => window.host.sendToolInput({}));
    await page.evaluate((r) => window.host.sendToolResult(r), listResult);
    await app.getByRole('heading', { name: 'Memories', exact: true }).waitFor();
    await cardOf(stored.colby).getByText('My son Colby lives in Los Angeles').waitFor();
    assert.equal(await cardOf(stored.tea).count(), 0);
    assert.equal(await cardOf(stored.markup).count(), 0);
    await look('list-dark');

    // An empty result says so.
    const empty = await client.callTool({ name: 'list_memories', arguments: { tags: ['no-such-tag'] } });
    assert.equal(empty.structuredContent.memories.length, 0);
    await page.evaluate((r) => window.host.sendToolResult(r), empty);
    await app.getByText('No memories to show.').waitFor();
    assert.equal(await app.getByRole('article').count(), 0);
    await look('empty');

    // A tool that failed: the app shows the payload's error.
    const failed = await client.callTool({ name: 'recall', arguments: { query: '' } });
    assert.equal(failed.isError, true);
    await page.evaluate((r) => window.host.sendToolResult(r), failed);
    await app.getByRole('status').getByText(/The tool failed: .*INVALID_INPUT/).waitFor();

    // The app answers the host's teardown.
    await page.evaluate(() => window.host.teardown());

    done();
  });
}

test('apps: a forget the owner declines says so and forgets nothing', { timeout: 90000 }, async (t) => {
  // Destructive calls wait for approval; this host asks the person and they decline.
  const srv = await startServe(t, { pats: { host: undefined }, env: { OWNSONA_APPROVAL: 'destructive' } });
  const client = new Client({ name: 'ownsona-apps-e2e', version: '1.0.0' }, { capabilities: { elicitation: {}, extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return { action: 'decline' };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${srv.tokens.host}` } } }));
  defer(t, () => client.close());
  const { html, csp, tools } = await appResource(client);
  const kept = await payload(client, 'remember', { text: 'The spare key is with the neighbour at number 12', tags: ['home'] });
  assert.equal(kept.ok, true, JSON.stringify(kept));

  const size = { name: 'approval', width: 1280, height: 860 };
  const { page, app, calls, look, done } = await openHost(t, { size, html, csp, tool: tools.find((x) => x.name === 'list_memories'), relay: { client } });
  await page.evaluate((r) => window.host.sendToolResult(r), await client.callTool({ name: 'list_memories', arguments: {} }));
  const card = app.getByRole('article', { name: `Memory ${kept.memory_id}` });
  await card.getByRole('button', { name: 'Forget' }).click();
  await card.getByRole('button', { name: 'Yes, forget' }).click();
  await card.getByRole('status').getByText(new RegExp(`Could not forget memory ${kept.memory_id}: it was not approved, so nothing changed\\.$`)).waitFor();
  assert.deepEqual(calls.map((c) => c.name), ['forget']);
  assert.equal(asked.length, 1, 'the host was asked once');
  assert.equal((await payload(client, 'get_memory', { id: kept.memory_id })).memory.deleted_at, undefined, 'nothing was forgotten');
  await card.getByRole('button', { name: 'Forget' }).waitFor(); // the card keeps its actions
  await look('approval-declined');
  done();
});
