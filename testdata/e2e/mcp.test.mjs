// End-to-end: the official MCP TypeScript SDK client drives the real ownsona binary over stdio
// and over Streamable HTTP (with a personal access token), calling every tool, reading resources
// and getting prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, ALL_TOOLS as TOOLS, READ_TOOLS, defer, tempDir, startServe, payload } from './helpers.mjs';

function tempDB(t) {
  return join(tempDir(t), 'ownsona.db');
}

// exercise runs the same scenario over any connected client.
async function exercise(client) {
  const info = client.getServerVersion();
  assert.equal(info.name, 'ownsona');
  assert.match(client.getInstructions() ?? '', /recall/);

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
  for (const t of tools) {
    assert.ok(t.outputSchema, `${t.name} has an outputSchema`);
    assert.equal(typeof t.annotations?.readOnlyHint, 'boolean', `${t.name} has annotations`);
  }

  const coffee = await payload(client, 'remember', { text: 'I prefer dark roast coffee', tags: ['food', 'Coffee'] });
  assert.equal(coffee.ok, true);
  assert.equal(coffee.message, 'Ok');
  const son = await payload(client, 'remember', { text: 'My son Colby lives in Los Angeles', tags: 'family', importance: 0.9 });
  const dup = await payload(client, 'remember', { text: 'I prefer dark roast coffee.' });
  assert.equal(dup.ok, true);
  assert.equal(dup.near_duplicates[0].id, coffee.memory_id, 'a near duplicate is stored and reported');
  const skipped = await payload(client, 'remember', { text: 'I prefer dark roast coffee', dedup_policy: 'skip_if_near' });
  assert.equal(skipped.message, 'Already remembered');

  const secret = await payload(client, 'remember', { text: 'my key is AKIA' + 'IOSFODNN7EXAMPLE' });
  assert.equal(secret.isError, true);
  assert.equal(secret.error.code, 'SECRET_REJECTED');

  const batch = await payload(client, 'remember_batch', { items: [{ text: 'Allergic to peanuts', tags: ['health'] }, { text: '' }, { text: 'Plays the cello on Sundays' }] });
  assert.deepEqual(batch.summary, { total: 3, succeeded: 2, failed: 1 });
  assert.equal(batch.results[1].error.code, 'INVALID_INPUT');

  const recall = await payload(client, 'recall', { query: 'coffee', limit: 5 });
  assert.equal(recall.matches[0].text.startsWith('I prefer dark roast coffee'), true);
  assert.equal(typeof recall.matches[0].score, 'number');
  const alias = await payload(client, 'search_memory', { query: 'Colby' });
  assert.equal(alias.matches[0].id, son.memory_id);
  const ctx = await payload(client, 'build_context_prompt', { user_prompt: 'What coffee should I buy?' });
  assert.match(ctx.prompt, /^The following are previously known facts:\n- I prefer dark roast coffee/);
  assert.match(ctx.prompt, /The following is the user's prompt:\nWhat coffee should I buy\?$/);

  const list = await payload(client, 'list_memories', { limit: 2 });
  assert.equal(list.memories.length, 2);
  assert.ok(list.memories[0].id > list.memories[1].id, 'newest first');
  const page2 = await payload(client, 'list_memories', { limit: 2, cursor: list.next_cursor });
  assert.ok(page2.memories[0].id < list.memories[1].id);

  const upd = await payload(client, 'update_memory', { id: son.memory_id, tags: ['family', 'la'], dry_run: true });
  assert.deepEqual(upd.changed_fields, ['tags']);
  assert.equal(upd.message, 'Would update');
  const upb = await payload(client, 'update_memory_batch', { items: [{ id: son.memory_id, importance: 1 }, { id: 999999, importance: 1 }] });
  assert.deepEqual(upb.summary, { total: 2, updated: 1, errors: 1 });
  const conf = await payload(client, 'confirm', { id: son.memory_id });
  assert.equal(conf.memory_id, son.memory_id);

  const gone = await payload(client, 'forget', { id: dup.memory_id, reason: 'duplicate', replaced_by_id: coffee.memory_id });
  assert.equal(gone.message, 'Forgotten');
  const got = await payload(client, 'get_memory', { id: dup.memory_id });
  assert.equal(got.memory.forget_reason, 'duplicate');
  assert.equal(got.memory.replaced_by_id, coffee.memory_id);
  const fb = await payload(client, 'forget_batch', { ids: [dup.memory_id, 424242] });
  assert.deepEqual(fb.summary, { total: 2, deleted: 0, already_deleted: 1, errors: 1 });

  const ts = await payload(client, 'text_search', { text: 'CELLO' });
  assert.equal(ts.memories.length, 1);
  await payload(client, 'remember', { text: 'I prefer dark roast coffee beans', dedup_policy: 'insert' });
  const nd = await payload(client, 'find_near_duplicates', { threshold: 0.8 });
  assert.ok(nd.summary.groups >= 1);
  const count = await payload(client, 'count_memories', { tags: ['health'] });
  assert.equal(count.count, 1);
  const stats = await payload(client, 'memory_stats');
  assert.equal(stats.soft_deleted, 1);
  // The default embedder is compiled in: every memory has its vector once the store settles.
  assert.equal(stats.embedder.name, 'builtin');
  assert.equal(stats.embedder.dimensions, 100);
  const tags = await payload(client, 'list_tags');
  assert.ok(tags.tags.some((t) => t.tag === 'family'));
  const exp = await payload(client, 'export_memories');
  assert.equal(exp.count, stats.total);

  // Bad arguments are refused with the field named (isError on 2025-11-25).
  const bad = await client.callTool({ name: 'recall', arguments: { query: 'x', limit: 500 } }).catch((e) => e);
  if (bad instanceof Error) {
    // JSON-RPC's own words in the message, the field in data (issue 27, item 6)
    assert.equal(bad.code, -32602);
    assert.equal(bad.data?.field, 'limit', JSON.stringify(bad.data));
  } else {
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.field, 'limit');
  }

  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === 'ownsona://stats'));
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.equal(resourceTemplates[0].uriTemplate, 'ownsona://memories/{id}');
  const mem = await client.readResource({ uri: `ownsona://memories/${son.memory_id}` });
  assert.equal(JSON.parse(mem.contents[0].text).id, son.memory_id);
  await assert.rejects(client.readResource({ uri: 'ownsona://memories/987654' }), /-32002|not found/i);

  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name).sort(), ['recall-context', 'review-duplicates', 'summarize-memories', 'tidy-tags']);
  const rc = await client.getPrompt({ name: 'recall-context', arguments: { topic: 'coffee' } });
  assert.match(rc.messages[0].content.text, /dark roast/);
  await assert.rejects(client.getPrompt({ name: 'summarize-memories', arguments: {} }), (e) => e.code === -32602 && /tag/.test(JSON.stringify(e.data)));
  const comp = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize-memories' }, argument: { name: 'tag', value: 'fa' } });
  assert.deepEqual(comp.completion.values, ['family']);
  await client.setLoggingLevel('warning');
  await client.ping();
}

test('stdio: the TypeScript SDK client uses every tool', { timeout: 60000 }, async (t) => {
  const transport = new StdioClientTransport({ command: BIN, args: ['stdio', '--db', tempDB(t)], stderr: 'pipe' });
  const client = new Client({ name: 'e2e-stdio', version: '1.0.0' });
  await client.connect(transport);
  defer(t, () => client.close());
  await exercise(client);
  const { memories } = await payload(client, 'list_memories', { limit: 1 });
  assert.equal(memories[0].source_client, 'stdio', 'stdio needs no token; memories record the transport');
  assert.equal(memories[0].source_provider, 'e2e-stdio', 'and the client name from initialize as the provider');
});

// connectPAT connects the SDK client over Streamable HTTP with a personal access token.
async function connectPAT(t, srv, token, name = 'e2e-http') {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  defer(t, () => client.close());
  return client;
}

test('http: the TypeScript SDK client uses every tool over Streamable HTTP with a personal access token', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t, { pats: { e2e: undefined } });
  const client = await connectPAT(t, srv, srv.tokens.e2e);
  await exercise(client);
  const { memories } = await payload(client, 'list_memories', { limit: 1 });
  assert.equal(memories[0].source_client, 'pat:e2e', 'memories record the personal access token that wrote them');
});

test('http: without the SDK auth provider, no token or a bad one is refused with a Bearer challenge', { timeout: 30000 }, async (t) => {
  const srv = await startServe(t);
  const client = new Client({ name: 'e2e-noauth', version: '1.0.0' });
  const err = await client.connect(new StreamableHTTPClientTransport(new URL(srv.url))).catch((e) => e);
  assert.ok(err instanceof StreamableHTTPError, `connect without a token fails: ${err}`);
  assert.equal(err.code, 401);

  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const post = (headers) => fetch(srv.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body, signal: AbortSignal.timeout(10000) });
  const none = await post({});
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('www-authenticate'),
    `Bearer realm="ownsona", resource_metadata="${srv.origin}/.well-known/oauth-protected-resource/mcp", scope="memories:read memories:write"`);
  const nb = await none.json();
  assert.equal(nb.jsonrpc, '2.0');
  assert.equal(nb.error.code, -32600);
  assert.equal(nb.error.data.error, 'unauthorized');
  assert.equal(typeof nb.error.data.error_description, 'string');

  for (const bad of ['osk_' + 'A'.repeat(43), 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJvd25lciJ9.', 'not a token']) {
    const r = await post({ authorization: `Bearer ${bad}` });
    assert.equal(r.status, 401, bad);
    assert.match(r.headers.get('www-authenticate'), /^Bearer .*error="invalid_token"/, bad);
    assert.equal((await r.json()).error.data.error, 'invalid_token', bad);
  }
});

test('http: a read-only personal access token sees only read tools and gets 403 insufficient_scope for remember', { timeout: 30000 }, async (t) => {
  const srv = await startServe(t, { pats: { full: undefined, reader: 'memories:read' } });
  const writer = await connectPAT(t, srv, srv.tokens.full, 'e2e-writer');
  const all = (await writer.listTools()).tools;
  const readOnly = all.filter((tool) => tool.annotations.readOnlyHint).map((tool) => tool.name).sort();
  assert.deepEqual(readOnly, [...READ_TOOLS].sort(), 'the tools annotated readOnlyHint');
  await payload(writer, 'remember', { text: 'The spare key is under the blue pot' });

  const reader = await connectPAT(t, srv, srv.tokens.reader, 'e2e-reader');
  const seen = (await reader.listTools()).tools.map((tool) => tool.name).sort();
  assert.deepEqual(seen, readOnly, 'tools/list shows exactly the read-only tools');
  const found = await payload(reader, 'recall', { query: 'spare key' });
  assert.match(found.matches[0].text, /blue pot/);

  const r = await fetch(srv.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${srv.tokens.reader}`, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'remember', arguments: { text: 'should not be stored' } } }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(r.status, 403);
  assert.match(r.headers.get('www-authenticate'), /^Bearer .*error="insufficient_scope"/);
  const rb = await r.json();
  assert.equal(rb.id, 7);
  assert.equal(rb.error.data.error, 'insufficient_scope');
  const err = await reader.callTool({ name: 'remember', arguments: { text: 'should not be stored either' } }).catch((e) => e);
  assert.ok(err instanceof StreamableHTTPError && err.code === 403, `the SDK reports the 403: ${err}`);
  assert.equal((await payload(writer, 'count_memories')).count, 1, 'nothing was stored through the read-only token');
});

// rawStatus sends a POST with exactly the Host and Origin given (fetch may not set Host).
function rawStatus(srv, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, timeout: 10000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

test('http: a rebinding Host and a foreign Origin are refused, even with a valid token', { timeout: 30000 }, async (t) => {
  const srv = await startServe(t, { pats: { e2e: undefined } });
  const auth = { authorization: `Bearer ${srv.tokens.e2e}` };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(await rawStatus(srv, { ...auth, host: `127.0.0.1:${srv.port}` }, body), 200);
  assert.equal(await rawStatus(srv, { ...auth, host: `localhost:${srv.port}`, origin: `http://localhost:${srv.port}` }, body), 200);
  assert.equal(await rawStatus(srv, { ...auth, host: `127.0.0.1:${srv.port}`, origin: 'https://evil.example' }, body), 403);
  const rebound = await rawStatus(srv, { ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' }, body);
  assert.ok(rebound >= 400 && rebound < 500, `a foreign Host gets a 4xx, got ${rebound}`);
  assert.equal(await rawStatus(srv, { ...auth, host: `evil.example.com:${srv.port}` }, body), 421);
});

test('http: the TypeScript SDK keeps a session, is told of changes to subscribed memories, and gets progress as an event stream', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t, { pats: { watcher: undefined, writer: undefined } });
  const watcherTransport = new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${srv.tokens.watcher}` } } });
  const watcher = new Client({ name: 'e2e-watcher', version: '1.0.0' });
  await watcher.connect(watcherTransport);
  defer(t, () => watcher.close());
  assert.match(watcherTransport.sessionId ?? '', /^[\x21-\x7e]{32,}$/, 'initialize started a session with a visible-ASCII id');
  assert.equal(watcher.getServerCapabilities().resources.subscribe, true);

  const updated = [];
  let wake;
  watcher.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); wake?.(); });
  await watcher.subscribeResource({ uri: 'ownsona://memories/recent' });
  const writer = await connectPAT(t, srv, srv.tokens.writer, 'e2e-writer');
  const { memory_id: id } = await payload(writer, 'remember', { text: 'The bike lock code is in the blue notebook' });
  await watcher.subscribeResource({ uri: `ownsona://memories/${id}` });
  await payload(writer, 'update_memory', { id, tags: ['bike'] });
  const deadline = Date.now() + 10000;
  while (!(updated.includes('ownsona://memories/recent') && updated.includes(`ownsona://memories/${id}`)) && Date.now() < deadline) {
    await new Promise((resolve) => { wake = resolve; setTimeout(resolve, 200); });
  }
  assert.ok(updated.includes('ownsona://memories/recent'), `the recent list's subscriber was told: ${updated}`);
  assert.ok(updated.includes(`ownsona://memories/${id}`), `the memory's subscriber was told: ${updated}`);
  await watcher.unsubscribeResource({ uri: 'ownsona://memories/recent' });

  // A batch with a progress token: the answer comes as an event stream, progress first.
  const progress = [];
  const res = await watcher.callTool({ name: 'remember_batch', arguments: { items: [{ text: 'one thing' }, { text: 'another thing' }] } },
    undefined, { onprogress: (p) => progress.push(p) });
  assert.equal(res.isError, false);
  assert.ok(progress.length >= 2, `progress notifications before the result: ${JSON.stringify(progress)}`);
  assert.ok(progress.every((p) => p.total === 2), 'progress counts the items');

  // DELETE ends the session; its id is then unknown.
  const sid = watcherTransport.sessionId;
  await watcherTransport.terminateSession();
  const after = await fetch(srv.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${srv.tokens.watcher}`, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), signal: AbortSignal.timeout(10000) });
  assert.equal(after.status, 404, 'an ended session is 404');
});

test('http: a 2024-11-05 client uses the legacy HTTP+SSE transport', { timeout: 30000 }, async (t) => {
  const srv = await startServe(t, { pats: { old: undefined } });
  const auth = { Authorization: `Bearer ${srv.tokens.old}` };
  const transport = new SSEClientTransport(new URL(srv.origin + '/mcp/sse'), {
    requestInit: { headers: auth },
    eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...auth } }) },
  });
  const client = new Client({ name: 'e2e-legacy', version: '1.0.0' });
  await client.connect(transport);
  defer(t, () => client.close());
  const { memory_id: id } = await payload(client, 'remember', { text: 'The legacy client remembers the gate code is 4411' });
  assert.ok(id > 0);
  const found = await payload(client, 'recall', { query: 'gate code' });
  assert.match(found.matches[0].text, /4411/);
});

test('http: over the rate limit a client gets 429 with Retry-After, X-RateLimit headers and JSON-RPC -32004', { timeout: 30000 }, async (t) => {
  const srv = await startServe(t, { pats: { busy: undefined, calm: undefined }, env: { OWNSONA_RATE_LIMIT: '60', OWNSONA_RATE_BURST: '5' } });
  const post = (token) => fetch(srv.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), signal: AbortSignal.timeout(10000) });
  const statuses = [];
  let last;
  for (let i = 0; i < 8; i++) {
    last = await post(srv.tokens.busy);
    statuses.push(last.status);
    if (last.status === 200) assert.equal(last.headers.get('x-ratelimit-limit'), '60');
  }
  assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200], 'the burst passes');
  assert.equal(last.status, 429);
  assert.ok(Number(last.headers.get('retry-after')) >= 1);
  assert.equal(last.headers.get('x-ratelimit-remaining'), '0');
  assert.equal((await last.json()).error.code, -32004);
  assert.equal((await post(srv.tokens.calm)).status, 200, 'another client has its own bucket');
});
