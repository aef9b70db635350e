// End-to-end: the official MCP TypeScript SDK client drives the real ownsona binary over stdio
// and over Streamable HTTP, calling every tool, reading resources and getting prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const BIN = process.env.OWNSONA_BIN;
if (!BIN) throw new Error('OWNSONA_BIN must name the ownsona binary (make e2e sets it)');

const TOOLS = [
  'remember', 'remember_batch', 'recall', 'search_memory', 'build_context_prompt', 'list_memories',
  'get_memory', 'update_memory', 'update_memory_batch', 'confirm', 'forget', 'forget_batch',
  'text_search', 'find_near_duplicates', 'count_memories', 'memory_stats', 'list_tags', 'export_memories',
];

function tempDB(t) {
  const dir = mkdtempSync(join(tmpdir(), 'ownsona-e2e-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'ownsona.db');
}

// payload calls a tool and returns its structured payload, checking it equals content[0].text.
async function payload(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.content[0].type, 'text');
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, `${name}: text and structuredContent differ`);
  return { ...res.structuredContent, isError: res.isError };
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
  assert.equal(stats.embedder.name, 'none');
  const tags = await payload(client, 'list_tags');
  assert.ok(tags.tags.some((t) => t.tag === 'family'));
  const exp = await payload(client, 'export_memories');
  assert.equal(exp.count, stats.total);

  // Bad arguments are refused with the field named (isError on 2025-11-25).
  const bad = await client.callTool({ name: 'recall', arguments: { query: 'x', limit: 500 } }).catch((e) => e);
  if (bad instanceof Error) {
    assert.match(bad.message, /limit/);
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
  await assert.rejects(client.getPrompt({ name: 'summarize-memories', arguments: {} }), /tag/);
  const comp = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize-memories' }, argument: { name: 'tag', value: 'fa' } });
  assert.deepEqual(comp.completion.values, ['family']);
  await client.setLoggingLevel('warning');
  await client.ping();
}

test('stdio: the TypeScript SDK client uses every tool', async (t) => {
  const transport = new StdioClientTransport({ command: BIN, args: ['stdio', '--db', tempDB(t)], stderr: 'pipe' });
  const client = new Client({ name: 'e2e-stdio', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  await exercise(client);
});

// startServe runs `ownsona serve` on a free loopback port and returns its MCP URL.
async function startServe(t) {
  const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0', '--db', tempDB(t)], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => proc.kill('SIGTERM'));
  return await new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('serve did not log its URL within 20 s:\n' + buf)), 20000);
    proc.stderr.on('data', (chunk) => {
      buf += chunk;
      for (const line of buf.split('\n')) {
        try {
          const rec = JSON.parse(line);
          if (rec.url) { clearTimeout(timer); resolve(rec.url); }
        } catch { /* partial line */ }
      }
    });
    proc.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${buf}`)));
  });
}

test('http: the TypeScript SDK client uses every tool over Streamable HTTP', async (t) => {
  const url = await startServe(t);
  const client = new Client({ name: 'e2e-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close());
  await exercise(client);
});

test('http: a rebinding Host and a foreign Origin are refused', async (t) => {
  const url = await startServe(t);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(ok.status, 200);
  const evil = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body });
  assert.equal(evil.status, 403);
});
