// End-to-end: the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client), the one
// that speaks MCP 2026-07-28, drives the real ownsona binary over Streamable HTTP (with a personal
// access token) and over stdio, pinned to 2026-07-28 and in `auto` mode (probe with
// server/discover, fall back to initialize). In every case it must end up in the modern era and
// list, remember and recall, read a resource, get a prompt and listen for resource updates. A
// last test runs a default-mode (legacy, initialize-based) client beside a modern one on one
// server.
//
// Besides what the SDK hands back, each test records the wire (HTTP through the transport's
// fetch; stdio through a small recording relay between the SDK and the binary) so that it can
// check what the SDK hides: resultType and the cache hints on the raw results, the absence of
// initialize and of session ids, subscription ids on the listen stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, ALL_TOOLS, defer, tempDir, startServe, payload } from './helpers.mjs';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const META_SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';
const PROMPTS = ['recall-context', 'review-duplicates', 'summarize-memories', 'tidy-tags'];
// The results that must carry ttlMs and cacheScope (server/utilities/caching.mdx, "Cacheable Results").
const CACHEABLE = ['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read'];
const WAIT_MS = 10000; // how long a notification may take

const MODES = [
  ['pinned to 2026-07-28', { pin: MODERN }],
  ['auto', 'auto'],
];

// ---- the wire, recorded ----

function parseJSON(s) {
  try { return JSON.parse(s); } catch { return undefined; }
}

// readSSE feeds each JSON-RPC message of an event stream to onMessage until the stream ends or
// is aborted.
async function readSSE(res, onMessage) {
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body) {
      buf += decoder.decode(chunk, { stream: true });
      let i;
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const event = buf.slice(0, i);
        buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
        const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        const msg = data && parseJSON(data);
        if (msg) onMessage(msg);
      }
    }
  } catch { /* the client closed the stream */ }
}

// httpWire is a fetch for the SDK's transport that adds the bearer token and records every
// exchange: {method, url, requestHeaders, request (the JSON-RPC body), status, headers,
// messages (the JSON-RPC messages of the answer, as they arrive)}.
function httpWire(token) {
  const exchanges = [];
  const fetchWithToken = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    const ex = { method: init.method ?? 'GET', url: String(url), requestHeaders: headers, request: typeof init.body === 'string' ? parseJSON(init.body) : undefined, messages: [] };
    exchanges.push(ex);
    const res = await fetch(url, { ...init, headers });
    ex.status = res.status;
    ex.headers = res.headers;
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('application/json')) {
      const body = await res.clone().json().catch(() => undefined);
      if (body !== undefined) ex.messages.push(...(Array.isArray(body) ? body : [body]));
    } else if (type.startsWith('text/event-stream')) {
      readSSE(res.clone(), (m) => ex.messages.push(m));
    }
    return res;
  };
  return {
    fetch: fetchWithToken,
    exchanges,
    sent: () => exchanges.flatMap((e) => (e.request === undefined ? [] : Array.isArray(e.request) ? e.request : [e.request])),
    received: () => exchanges.flatMap((e) => e.messages),
  };
}

// RELAY sits between the SDK and `ownsona stdio`: argv is [log dir, binary, args…]; it passes
// stdin and stdout through unchanged and appends each line, prefixed with > (to the server) or <
// (from it), to <log dir>/<its pid>.log before passing it on, so a line is in the log before the
// other side can see it. It ends when the server does, and passes SIGTERM/SIGINT on.
const RELAY = `
const { spawn } = require('node:child_process');
const { appendFileSync } = require('node:fs');
const [dir, bin, ...args] = process.argv.slice(1);
const log = dir + '/' + process.pid + '.log';
const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
function tap(dir) {
  let buf = '';
  return (chunk) => {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\\n')) >= 0) { appendFileSync(log, dir + ' ' + buf.slice(0, i) + '\\n'); buf = buf.slice(i + 1); }
  };
}
const up = tap('>'), down = tap('<');
process.stdin.on('data', (c) => { up(c); child.stdin.write(c); });
process.stdin.on('end', () => child.stdin.end());
child.stdin.on('error', () => {});
process.stdout.on('error', () => {});
child.stdout.on('data', (c) => { down(c); process.stdout.write(c); });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => child.kill(s));
`;

// stdioWire reads what the relays logged: the session process (the transport's pid) apart from
// any other process the SDK started (the auto/pinned probe runs on a short-lived sibling).
function stdioWire(dir, transport) {
  const read = (file) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)
    .map((l) => ({ dir: l[0], msg: parseJSON(l.slice(2)) }));
  const files = () => readdirSync(dir).filter((f) => f.endsWith('.log'));
  const session = () => (files().includes(`${transport.pid}.log`) ? read(`${transport.pid}.log`) : []);
  return {
    sent: () => session().filter((l) => l.dir === '>').map((l) => l.msg),
    received: () => session().filter((l) => l.dir === '<').map((l) => l.msg),
    probes: () => files().filter((f) => f !== `${transport.pid}.log`).map(read),
  };
}

// connect starts a server on `kind` ("http" or "stdio") and connects an SDK v2 client to it in
// the given negotiation mode. It returns {client, kind, name, wire, transport, srv?, stderr()}.
async function connect(t, kind, mode, name) {
  const client = new Client({ name, version: '1.0.0' }, mode === undefined ? undefined : { versionNegotiation: { mode } });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  if (kind === 'http') {
    const srv = await startServe(t, { pats: { [name]: undefined } });
    const wire = httpWire(srv.tokens[name]);
    const transport = new StreamableHTTPClientTransport(new URL(srv.url), { fetch: wire.fetch });
    await client.connect(transport);
    defer(t, () => client.close());
    return { client, kind, name, wire, transport, srv, errors, stderr: srv.log };
  }
  const dir = tempDir(t, 'ownsona-modern-stdio-');
  const logs = join(dir, 'wire');
  mkdirSync(logs);
  const transport = new StdioClientTransport({ command: process.execPath, args: ['-e', RELAY, logs, BIN, 'stdio', '--db', join(dir, 'ownsona.db')], stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (c) => { stderr += c; });
  await client.connect(transport);
  defer(t, () => client.close());
  return { client, kind, name, wire: stdioWire(logs, transport), transport, errors, stderr: () => stderr };
}

// answerTo finds the server's answer to the last request of `method` the client sent.
function answerTo(conn, method) {
  const req = conn.wire.sent().findLast((m) => m?.method === method && m.id !== undefined);
  assert.ok(req, `the client sent ${method}`);
  const ans = conn.wire.received().find((m) => m && m.id === req.id && (m.result !== undefined || m.error !== undefined));
  assert.ok(ans, `the server answered ${method} (id ${JSON.stringify(req.id)})`);
  return { req, ans };
}

// assertCacheable checks a raw result for the hints every cacheable result carries.
function assertCacheable(method, result) {
  assert.equal(result.resultType, 'complete', `${method}: resultType`);
  assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `${method}: ttlMs is an integer >= 0, got ${JSON.stringify(result.ttlMs)}`);
  assert.equal(result.cacheScope, 'private', `${method}: results depend on the token, so cacheScope is private`);
}

// waitFor polls cond every 50 ms until it holds or ms pass, and returns whether it held.
async function waitFor(cond, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return cond();
}

function sourceClient(conn) {
  return conn.kind === 'http' ? `pat:${conn.name}` : 'stdio';
}

// ---- the scenarios, each over HTTP and stdio, pinned and auto ----

for (const kind of ['http', 'stdio']) {
  for (const [modeName, mode] of MODES) {
    test(`${kind}, ${modeName}: the TypeScript SDK v2 client works in the 2026-07-28 era`, { timeout: 60000 }, async (t) => {
      const name = `e2e-modern-${kind}-${mode === 'auto' ? 'auto' : 'pinned'}`;
      const conn = await connect(t, kind, mode, name);
      const { client } = conn;
      let memoryId; // remembered in one subtest, used by the later ones

      await t.test('connects in the modern era through server/discover, without initialize', () => {
        assert.equal(client.getProtocolEra(), 'modern');
        assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
        assert.equal(client.getServerVersion()?.name, 'ownsona');
        assert.match(client.getInstructions() ?? '', /recall/);
        const discover = client.getDiscoverResult();
        assert.ok(discover, 'the SDK kept the server/discover result');
        assert.ok(discover.supportedVersions.includes(MODERN), `supportedVersions: ${discover.supportedVersions}`);
        assert.ok(discover.supportedVersions.includes(LEGACY), `legacy clients are still served: ${discover.supportedVersions}`);
        const caps = client.getServerCapabilities();
        for (const c of ['tools', 'resources', 'prompts', 'completions']) assert.ok(caps?.[c], `capability ${c}: ${JSON.stringify(caps)}`);

        // The raw server/discover answer (on the connection over HTTP, on the probe process over stdio).
        let raw;
        if (kind === 'http') {
          const first = conn.wire.exchanges[0];
          assert.equal(first.request?.method, 'server/discover', 'the first request is server/discover');
          assert.equal(first.status, 200);
          raw = answerTo(conn, 'server/discover').ans;
        } else {
          const probe = conn.wire.probes().flat();
          const req = probe.find((l) => l.dir === '>' && l.msg?.method === 'server/discover')?.msg;
          assert.ok(req, `the SDK probed with server/discover: ${JSON.stringify(probe)}`);
          raw = probe.find((l) => l.dir === '<' && l.msg?.id === req.id)?.msg;
          assert.ok(raw, 'the probe process answered server/discover');
        }
        assert.equal(raw.error, undefined, `server/discover: ${JSON.stringify(raw.error)}`);
        assertCacheable('server/discover', raw.result);
        assert.equal(raw.result._meta?.[META_SERVER_INFO]?.name, 'ownsona', 'serverInfo in the result _meta');
        assert.ok(!conn.wire.sent().some((m) => m?.method === 'initialize'), 'no initialize on the session');
      });

      await t.test('lists tools, resources, resource templates and prompts, each on one page with cache hints', async () => {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((x) => x.name).sort(), [...ALL_TOOLS].sort());
        for (const tool of tools) {
          assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
          assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name} has annotations`);
        }
        const { resources } = await client.listResources();
        const uris = resources.map((r) => r.uri);
        for (const u of ['ownsona://memories/recent', 'ownsona://tags', 'ownsona://stats']) assert.ok(uris.includes(u), `resources/list has ${u}: ${uris}`);
        const { resourceTemplates } = await client.listResourceTemplates();
        assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['ownsona://memories/{id}']);
        const { prompts } = await client.listPrompts();
        assert.deepEqual(prompts.map((p) => p.name).sort(), PROMPTS);

        for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
          const sent = conn.wire.sent().filter((m) => m?.method === method);
          assert.equal(sent.length, 1, `${method} was asked once (a last page with a nextCursor makes the SDK ask again)`);
          const { ans } = answerTo(conn, method);
          assert.equal(ans.error, undefined, `${method}: ${JSON.stringify(ans.error)}`);
          assertCacheable(method, ans.result);
          assert.ok(!('nextCursor' in ans.result), `${method}: the only page has no nextCursor, got ${JSON.stringify(ans.result.nextCursor)}`);
        }
      });

      await t.test('remember, then recall finds the memory, recorded under the client\'s name from _meta', async () => {
        const text = `On ${kind} (${modeName}) I take my espresso with oat milk`;
        const stored = await payload(client, 'remember', { text, tags: ['coffee', 'Morning Routine'] });
        assert.equal(stored.ok, true, JSON.stringify(stored));
        assert.equal(stored.message, 'Ok');
        assert.ok(Number.isInteger(stored.memory_id) && stored.memory_id > 0);
        memoryId = stored.memory_id;
        await payload(client, 'remember', { text: 'The dentist appointment is on Thursday at nine' });

        const found = await payload(client, 'recall', { query: 'espresso with oat milk', limit: 5 });
        assert.equal(found.ok, true, JSON.stringify(found));
        assert.equal(found.matches[0].id, memoryId, `the best match: ${JSON.stringify(found.matches)}`);
        assert.equal(found.matches[0].text, text);
        assert.deepEqual(found.matches[0].tags, ['coffee', 'morning-routine']);
        assert.equal(typeof found.matches[0].score, 'number');
        assert.equal(found.matches[0].source_client, sourceClient(conn));
        assert.equal(found.matches[0].source_provider, name, 'the provider is the clientInfo the request carried in _meta');
      });

      await t.test('reads resources and gets a prompt', async () => {
        assert.ok(memoryId, 'a memory was remembered');
        const { resources } = await client.listResources();
        const recentUri = resources.find((r) => r.uri.endsWith('/recent'))?.uri;
        assert.equal(recentUri, 'ownsona://memories/recent');
        const recent = await client.readResource({ uri: recentUri });
        assert.equal(recent.contents[0].uri, recentUri);
        assert.equal(recent.contents[0].mimeType, 'application/json');
        const list = JSON.parse(recent.contents[0].text).memories;
        assert.ok(list.some((m) => m.id === memoryId), `the recent list holds memory ${memoryId}: ${recent.contents[0].text}`);
        assertCacheable('resources/read', answerTo(conn, 'resources/read').ans.result);

        const one = await client.readResource({ uri: `ownsona://memories/${memoryId}` });
        assert.equal(JSON.parse(one.contents[0].text).id, memoryId);
        assertCacheable('resources/read', answerTo(conn, 'resources/read').ans.result);

        const missing = await client.readResource({ uri: 'ownsona://memories/987654' }).then(() => undefined, (e) => e);
        assert.ok(missing, 'reading a memory that does not exist fails');
        assert.equal(missing.code, -32602, `a missing resource is -32602 in 2026-07-28: ${missing}`);
        assert.equal(missing.data?.uri, 'ownsona://memories/987654');

        const prompt = await client.getPrompt({ name: 'recall-context', arguments: { topic: 'espresso' } });
        assert.equal(prompt.messages[0].role, 'user');
        assert.match(prompt.messages[0].content.text, /espresso with oat milk/);
        const { ans } = answerTo(conn, 'prompts/get');
        assert.equal(ans.result.resultType, 'complete');
        const done = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize-memories' }, argument: { name: 'tag', value: 'mor' } });
        assert.deepEqual(done.completion.values, ['morning-routine']);
      });

      await t.test('subscriptions/listen is told when a subscribed memory and the recent list change', async () => {
        assert.ok(memoryId, 'a memory was remembered');
        const memUri = `ownsona://memories/${memoryId}`;
        const recentUri = 'ownsona://memories/recent';
        const before = JSON.parse((await client.readResource({ uri: memUri })).contents[0].text);
        assert.deepEqual(before.tags, ['coffee', 'morning-routine']);

        const updates = [];
        client.setNotificationHandler('notifications/resources/updated', (n) => { updates.push(n); });
        const sub = await client.listen({ resourceSubscriptions: [recentUri, memUri] });
        assert.deepEqual([...(sub.honoredFilter.resourceSubscriptions ?? [])].sort(), [recentUri, memUri].sort(), 'the server honours both subscriptions');
        const listenReq = conn.wire.sent().findLast((m) => m?.method === 'subscriptions/listen');
        const ack = conn.wire.received().find((m) => m?.method === 'notifications/subscriptions/acknowledged' && m.params?._meta?.[META_SUBSCRIPTION] === listenReq.id);
        assert.ok(ack, 'the acknowledgement carries the listen request id as subscriptionId');
        if (kind === 'http') {
          const ex = conn.wire.exchanges.find((e) => e.request === listenReq);
          assert.equal(ex.status, 200);
          assert.match(ex.headers.get('content-type'), /^text\/event-stream/, 'listen answers with an event stream');
          assert.equal(ex.messages[0]?.method, 'notifications/subscriptions/acknowledged', 'the acknowledgement comes first');
        }

        await payload(client, 'update_memory', { id: memoryId, tags: ['coffee', 'oat-milk'] });
        const other = await payload(client, 'remember', { text: 'The spare bike key hangs by the back door' });
        const seen = () => updates.map((n) => n.params.uri);
        const got = await waitFor(() => seen().includes(memUri) && seen().includes(recentUri));
        assert.ok(got, `within ${WAIT_MS} ms the listen stream told of ${memUri} and ${recentUri}; got ${JSON.stringify(seen())}`);
        for (const n of updates) {
          assert.equal(n.params._meta?.[META_SUBSCRIPTION], listenReq.id, `each update names its subscription: ${JSON.stringify(n)}`);
          assert.ok([memUri, recentUri].includes(n.params.uri), `only subscribed resources are reported (memory ${other.memory_id} was not subscribed): ${n.params.uri}`);
        }

        // What the notification announced is there to read.
        const after = JSON.parse((await client.readResource({ uri: memUri })).contents[0].text);
        assert.deepEqual(after.tags, ['coffee', 'oat-milk']);

        await sub.close();
        assert.equal(await sub.closed, 'local');
      });

      await t.test('server/discover advertises resources.subscribe, since listen honours resourceSubscriptions', () => {
        // server/resources.mdx, Capabilities: "subscribe: whether the server supports
        // resource-specific update notifications for resources requested through
        // subscriptions/listen using the resourceSubscriptions filter."
        assert.equal(client.getServerCapabilities()?.resources?.subscribe, true,
          `server/discover capabilities.resources: ${JSON.stringify(client.getDiscoverResult()?.capabilities?.resources)}`);
      });

      await t.test('the session wire is modern: no initialize, no session id, no server requests, resultType on every result', () => {
        const sent = conn.wire.sent();
        const received = conn.wire.received();
        assert.ok(sent.length >= 10, `the wire was recorded (${sent.length} messages sent)`);
        assert.deepEqual(sent.filter((m) => ['initialize', 'notifications/initialized', 'ping', 'resources/subscribe', 'logging/setLevel'].includes(m?.method)).map((m) => m.method), []);
        for (const m of sent.filter((x) => x?.id !== undefined)) assert.equal(m.params?._meta?.[META_VERSION], MODERN, `${m.method} carried the version in _meta`);
        const requests = received.filter((m) => m?.method !== undefined && m.id !== undefined);
        assert.deepEqual(requests, [], 'under 2026-07-28 the server sends no requests to the client');
        const failed = received.filter((m) => m?.error !== undefined)
          .map((m) => sent.find((x) => x?.id === m.id && x.method !== undefined))
          .map((req) => `${req?.method} ${req?.params?.uri ?? req?.params?.name ?? ''}`.trim());
        assert.deepEqual(failed, ['resources/read ownsona://memories/987654'], 'only the read of a missing memory failed');
        const results = received.filter((m) => m?.result !== undefined);
        assert.ok(results.length >= 10);
        for (const m of results) assert.equal(m.result.resultType, 'complete', `resultType on the answer to ${JSON.stringify(m.id)}`);
        for (const method of CACHEABLE) {
          for (const req of sent.filter((x) => x?.method === method && x.id !== undefined)) {
            const ans = received.find((x) => x?.id === req.id && x.result !== undefined);
            if (ans) assertCacheable(method, ans.result);
          }
        }
        if (kind === 'http') {
          const withSession = conn.wire.exchanges.filter((e) => e.headers?.get('mcp-session-id'));
          assert.deepEqual(withSession.map((e) => e.request?.method), [], 'no Mcp-Session-Id is minted for a modern request');
          assert.equal(conn.transport.sessionId, undefined);
          assert.deepEqual(conn.wire.exchanges.filter((e) => e.method !== 'POST').map((e) => e.method), [], 'no GET stream, no DELETE');
        }
        assert.deepEqual(conn.errors.map(String), [], 'the SDK reported no protocol errors');
      });
    });
  }
}

// ---- both eras on one server ----

test('http: a default-mode (legacy) SDK v2 client and a modern one use one server at the same time', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t, { pats: { modern: undefined, legacy: undefined } });
  const modernWire = httpWire(srv.tokens.modern);
  const legacyWire = httpWire(srv.tokens.legacy);
  const modern = new Client({ name: 'e2e-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  const legacy = new Client({ name: 'e2e-legacy', version: '1.0.0' }); // the default: legacy, initialize
  const legacyTransport = new StreamableHTTPClientTransport(new URL(srv.url), { fetch: legacyWire.fetch });
  const modernTransport = new StreamableHTTPClientTransport(new URL(srv.url), { fetch: modernWire.fetch });
  await Promise.all([modern.connect(modernTransport), legacy.connect(legacyTransport)]);
  defer(t, () => modern.close());
  defer(t, () => legacy.close());

  assert.equal(modern.getProtocolEra(), 'modern');
  assert.equal(modern.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(legacy.getProtocolEra(), 'legacy');
  assert.equal(legacy.getNegotiatedProtocolVersion(), LEGACY);
  assert.equal(legacyWire.exchanges[0].request?.method, 'initialize', 'the default mode opens with initialize');
  assert.match(legacyTransport.sessionId ?? '', /^[\x21-\x7e]{32,}$/, 'initialize started a session');
  assert.equal(modernTransport.sessionId, undefined, 'the modern client has no session');
  assert.equal(legacy.getServerCapabilities()?.resources?.subscribe, true, 'the legacy era still offers resources/subscribe');

  // Each listens for the recent list its own way: resources/subscribe (legacy) and subscriptions/listen (modern).
  const recentUri = 'ownsona://memories/recent';
  const legacyUpdates = [];
  const modernUpdates = [];
  legacy.setNotificationHandler('notifications/resources/updated', (n) => { legacyUpdates.push(n.params.uri); });
  modern.setNotificationHandler('notifications/resources/updated', (n) => { modernUpdates.push(n.params.uri); });
  await legacy.subscribeResource({ uri: recentUri });
  const sub = await modern.listen({ resourceSubscriptions: [recentUri] });
  assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [recentUri]);

  // Interleaved: both write at once, then each finds what the other wrote.
  const [fromModern, fromLegacy] = await Promise.all([
    payload(modern, 'remember', { text: 'The modern client notes the boiler was serviced in March' }),
    payload(legacy, 'remember', { text: 'The legacy client notes the car needs new tyres before winter' }),
  ]);
  assert.equal(fromModern.ok, true, JSON.stringify(fromModern));
  assert.equal(fromLegacy.ok, true, JSON.stringify(fromLegacy));
  const [legacyFinds, modernFinds] = await Promise.all([
    payload(legacy, 'recall', { query: 'boiler serviced' }),
    payload(modern, 'recall', { query: 'car tyres winter' }),
  ]);
  assert.equal(legacyFinds.matches[0].id, fromModern.memory_id);
  assert.equal(legacyFinds.matches[0].source_provider, 'e2e-modern', 'the modern write is recorded under the name in its _meta');
  assert.equal(legacyFinds.matches[0].source_client, 'pat:modern');
  assert.equal(modernFinds.matches[0].id, fromLegacy.memory_id);
  assert.equal(modernFinds.matches[0].source_provider, 'e2e-legacy', 'the legacy write is recorded under the name from initialize');
  assert.equal(modernFinds.matches[0].source_client, 'pat:legacy');

  const [legacyTools, modernTools] = await Promise.all([legacy.listTools(), modern.listTools()]);
  assert.deepEqual(legacyTools.tools.map((x) => x.name), modernTools.tools.map((x) => x.name), 'both eras see the same tools in the same order');

  const told = await waitFor(() => legacyUpdates.includes(recentUri) && modernUpdates.includes(recentUri));
  assert.ok(told, `within ${WAIT_MS} ms both were told the recent list changed: legacy ${JSON.stringify(legacyUpdates)}, modern ${JSON.stringify(modernUpdates)}`);
  await sub.close();

  // Each stayed in its era on the wire.
  for (const e of legacyWire.exchanges.filter((x) => x.method === 'POST' && x.request?.method !== 'initialize')) {
    assert.ok(e.requestHeaders.get('mcp-session-id'), `legacy ${e.request?.method} carried the session id`);
    assert.equal(e.request?.params?._meta?.[META_VERSION], undefined, `legacy ${e.request?.method} carried no modern _meta`);
  }
  for (const m of legacyWire.received().filter((x) => x?.result !== undefined)) {
    assert.equal(m.result.resultType, undefined, `a legacy result has no resultType: ${JSON.stringify(m).slice(0, 200)}`);
  }
  assert.deepEqual(modernWire.exchanges.filter((e) => e.headers?.get('mcp-session-id') || e.requestHeaders.get('mcp-session-id')).map((e) => e.request?.method), []);
  assert.ok(!modernWire.sent().some((m) => m?.method === 'initialize'));
  for (const m of modernWire.received().filter((x) => x?.result !== undefined)) assert.equal(m.result.resultType, 'complete');
});
