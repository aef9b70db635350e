// End-to-end (issue 15, "Large imports without the conversation"): the official MCP TypeScript
// SDK calls prepare_import_upload on the real binary, real curl uploads the file to the URL it
// returned with the upload token alone, and import_status follows the import to its counts. A
// reused token, another client's token and an access token are refused at the upload URL, and
// each fixture of testdata/import goes in. Expiry is tested in Go (app/upload_test.go, with the
// app's settable clock): the ten minutes are not a setting, and a test should not wait them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServe, tempDir, payload } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(here, '..', 'import');

async function connect(t, srv, token) {
  const client = new Client({ name: 'e2e-upload', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  t.after(() => client.close());
  return client;
}

// curl POSTs a file as curl users would: the raw body (--data-binary) or a form field (-F).
// It returns the HTTP status and the JSON answer.
function curl(url, token, file, { form = false } = {}) {
  const args = ['-sS', '-o', '-', '-w', '\n%{http_code}', '-H', `Authorization: Bearer ${token}`];
  args.push(...(form ? ['-F', `file=@${file}`] : ['--data-binary', `@${file}`]), url);
  const r = spawnSync('curl', args, { encoding: 'utf8', timeout: 120000, maxBuffer: 1 << 20 });
  assert.equal(r.status, 0, `curl failed: ${r.stderr}`);
  const cut = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(cut + 1)), body: JSON.parse(r.stdout.slice(0, cut)) };
}

async function prepare(client, filename) {
  const p = await payload(client, 'prepare_import_upload', { filename });
  assert.equal(p.ok, true, JSON.stringify(p));
  assert.match(p.upload_token, /^osu_[A-Za-z0-9_-]{43}$/);
  assert.match(p.upload_url, /^http:\/\/127\.0\.0\.1:\d+\/mcp\/upload\/[A-Za-z0-9_-]+$/);
  assert.equal(p.max_bytes, 64 << 20);
  return p;
}

// done polls import_status until the import leaves waiting and running.
async function done(client, id) {
  const deadline = Date.now() + 120000;
  for (;;) {
    const p = await payload(client, 'import_status', { id });
    assert.equal(p.ok, true, JSON.stringify(p));
    const job = p.imports[0];
    if (job.state !== 'waiting' && job.state !== 'running') return job;
    assert.ok(Date.now() < deadline, `import still ${job.state}: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a 10 MB export uploaded with curl, followed with import_status', async (t) => {
  const srv = await startServe(t, { pats: { alice: undefined, bob: undefined } });
  const alice = await connect(t, srv, srv.tokens.alice);
  const bob = await connect(t, srv, srv.tokens.bob);
  const dir = tempDir(t);

  // An ownsona export of about 10 MB, with two lines that are not JSON.
  const lines = ['{"format":"ownsona-export","version":1,"exported_at":"2026-03-01T10:00:00Z"}'];
  const pad = 'the garden notes say the tomatoes went in after the last frost and the basil by the south window';
  let n = 0;
  while (lines.join('\n').length < 10 * 1000 * 1000 && n < 60000) {
    for (let i = 0; i < 1000; i++, n++) {
      const ts = new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString();
      lines.push(JSON.stringify({ id: n + 1, text: `Fact ${n}: ${pad}`, tags: ['bulk'], importance: 0.5, created_at: ts }));
    }
  }
  lines.splice(10, 0, 'not json at all');
  lines.push('{"text": broken}');
  const file = join(dir, 'export.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const size = statSync(file).size;
  assert.ok(size >= 10 * 1000 * 1000, `the file is ${size} bytes`);

  const tk = await prepare(alice, 'export.jsonl');
  const waiting = await payload(alice, 'import_status', { id: tk.upload_id });
  assert.equal(waiting.imports[0].state, 'waiting');

  const up = curl(tk.upload_url, tk.upload_token, file);
  assert.equal(up.status, 202, JSON.stringify(up.body));
  assert.equal(up.body.import.bytes, size);

  const job = await done(alice, tk.upload_id);
  assert.equal(job.state, 'done', JSON.stringify(job));
  assert.equal(job.format, 'ownsona');
  assert.equal(job.read, n);
  assert.equal(job.imported, n);
  assert.equal(job.failed, 2);
  assert.deepEqual(job.errors.map((e) => e.line), [11, lines.length]);
  const count = await payload(alice, 'count_memories', {});
  assert.equal(count.count, n);
  const list = await payload(alice, 'list_memories', { limit: 1 });
  assert.equal(list.memories[0].source_client, 'pat:alice', 'imported memories record the uploader');

  await t.test('the token works once', () => {
    const again = curl(tk.upload_url, tk.upload_token, file);
    assert.equal(again.status, 401);
    assert.equal(again.body.error, 'upload_token_used');
  });
  await t.test("another client's token is refused, and its import_status sees nothing of alice's", async () => {
    const theirs = await prepare(bob, 'other.md');
    const wrong = curl(tk.upload_url, theirs.upload_token, file);
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.error, 'wrong_upload_url');
    const st = await payload(bob, 'import_status', {});
    assert.deepEqual(st.imports.map((j) => j.id), [theirs.upload_id]);
    const other = await payload(bob, 'import_status', { id: tk.upload_id });
    assert.equal(other.ok, false);
    assert.equal(other.error.code, 'NOT_FOUND');
  });
  await t.test('an access token is refused at the upload URL, and the upload token at /mcp', async () => {
    const fresh = await prepare(alice, 'x.md');
    const r = curl(fresh.upload_url, srv.tokens.alice, file);
    assert.equal(r.status, 401);
    assert.equal(r.body.error, 'access_token_not_accepted');
    const res = await fetch(srv.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${fresh.upload_token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 401);
  });
});

test('each import format from its fixture', async (t) => {
  const srv = await startServe(t, { pats: { carol: undefined } });
  const carol = await connect(t, srv, srv.tokens.carol);
  const cases = [
    { file: 'ownsona.jsonl', format: 'ownsona', read: 3, failed: 1 },
    { file: 'server-memory.jsonl', format: 'server-memory', read: 4, failed: 2, form: true },
    { file: 'mcp-memory-service.json', format: 'mcp-memory-service', read: 3, failed: 1 },
    { file: 'mem0.json', format: 'mem0', read: 2, failed: 1, form: true },
    { file: 'openmemory-memories.json', format: 'mem0', read: 2, failed: 1 },
    { file: 'openmemory.jsonl', format: 'mem0', read: 3, failed: 1 },
    { file: 'notes.md', format: 'markdown', read: 7, failed: 1, form: true },
  ];
  for (const c of cases) {
    await t.test(c.file, async () => {
      const tk = await prepare(carol, c.file);
      const up = curl(tk.upload_url, tk.upload_token, join(FIXTURES, c.file), { form: c.form });
      assert.equal(up.status, 202, JSON.stringify(up.body));
      const job = await done(carol, tk.upload_id);
      assert.equal(job.state, 'done', JSON.stringify(job));
      assert.equal(job.format, c.format);
      assert.equal(job.read, c.read);
      assert.equal(job.failed, c.failed);
      assert.equal(job.errors.length, c.failed);
      // OpenMemory's two files share memories: what one imported, the other skips.
      assert.equal(job.imported + job.skipped, c.read);
    });
  }
});
