// Shared by the end-to-end suites: start `ownsona serve` on a free loopback port (with a known
// owner password, and personal access tokens created through its admin socket), and act as the owner's browser in the
// OAuth login and consent pages with plain fetch (cookies and hidden fields kept).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BIN = process.env.OWNSONA_BIN;
if (!BIN) throw new Error('OWNSONA_BIN must name the ownsona binary (make e2e sets it)');

export const OWNER = 'owner';
export const PASSWORD = 'e2e correct horse battery staple';

export const ALL_TOOLS = [
  'remember', 'remember_batch', 'recall', 'search_memory', 'build_context_prompt', 'list_memories',
  'get_memory', 'update_memory', 'update_memory_batch', 'confirm', 'forget', 'forget_batch',
  'text_search', 'find_near_duplicates', 'count_memories', 'memory_stats', 'list_tags', 'export_memories',
  'search', 'fetch', 'prepare_import_upload', 'import_status',
];

// The tools a memories:read token may call (the read-only ones); the others need memories:write.
export const READ_TOOLS = [
  'recall', 'search_memory', 'build_context_prompt', 'list_memories', 'get_memory', 'text_search',
  'find_near_duplicates', 'count_memories', 'memory_stats', 'list_tags', 'export_memories',
  'search', 'fetch', 'import_status',
];

// defer runs fn when test t ends, after every function deferred later (last in, first out, so a
// browser is closed before the server it talks to is stopped, and that before its directory is
// removed). node:test runs t.after hooks in the order they were added.
const stacks = new WeakMap();
export function defer(t, fn) {
  let stack = stacks.get(t);
  if (!stack) {
    stack = [];
    stacks.set(t, stack);
    t.after(async () => {
      const errors = [];
      while (stack.length) {
        try { await stack.pop()(); } catch (e) { errors.push(e); }
      }
      if (errors.length) throw errors[0];
    });
  }
  stack.push(fn);
}

// tempDir makes a directory removed when the test ends.
export function tempDir(t, prefix = 'ownsona-e2e-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  defer(t, () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// createToken runs `ownsona token create` on a database (through the admin socket of the server
// that holds it, as an owner would), and returns the personal access token it prints.
export function createToken(db, name, scope) {
  const args = ['token', 'create', '--name', name, '--db', db];
  if (scope) args.push('--scope', scope);
  const r = spawnSync(BIN, args, { encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 0, `token create failed:\n${r.stdout}\n${r.stderr}`);
  const tok = r.stdout.trim();
  assert.match(tok, /^osk_[A-Za-z0-9_-]{20,}$/, 'token create prints only the token on stdout');
  return tok;
}

// startServe runs `ownsona serve --addr 127.0.0.1:0` on a fresh database, waits for its
// "serving MCP" log line, then creates the named personal access tokens ({name:
// scope|undefined}) through its admin socket. It returns {url, origin, issuer, port, tokens, log()}; the server is stopped and the
// database removed when the test ends.
export async function startServe(t, { pats = {}, env = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ownsona-serve-'));
  const db = join(dir, 'ownsona.db');
  // Rate limits are off unless a test is about them: the suites call tools faster than any assistant.
  const childEnv = { ...process.env, OWNSONA_LOGIN_USERNAME: OWNER, OWNSONA_LOGIN_PASSWORD: PASSWORD, OWNSONA_RATE_LIMIT: '0', ...env };
  for (const k of ['OWNSONA_PUBLIC_URL', 'OWNSONA_ADDR', 'OWNSONA_DB', 'OWNSONA_TRUSTED_PROXIES']) delete childEnv[k];
  const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0', '--db', db], { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  let buf = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk) => { buf += chunk; });
  defer(t, async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const rec = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not log "serving MCP" within 20 s:\n' + buf)), 20000);
    const scan = () => {
      for (const line of buf.split('\n')) {
        let r;
        try { r = JSON.parse(line); } catch { continue; } // a partial line
        if (r.message === 'serving MCP') {
          clearTimeout(timer);
          proc.stderr.off('data', scan);
          proc.off('exit', onExit);
          resolve(r);
          return;
        }
      }
    };
    const onExit = (code) => { clearTimeout(timer); reject(new Error(`serve exited with ${code}:\n${buf}`)); };
    proc.stderr.on('data', scan);
    proc.once('exit', onExit);
  });
  const tokens = {};
  for (const [name, scope] of Object.entries(pats)) tokens[name] = createToken(db, name, scope);
  const url = new URL(rec.url);
  assert.equal(url.hostname, '127.0.0.1');
  assert.equal(url.pathname, '/mcp');
  assert.equal(rec.issuer, url.origin, 'without OWNSONA_PUBLIC_URL the issuer is http:// and the bound address');
  return { url: rec.url, origin: url.origin, issuer: rec.issuer, port: Number(url.port), tokens, proc, log: () => buf };
}

// ---- the owner's browser, with fetch ----

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos|#39);/gi, (m, e) => {
    const k = e.toLowerCase();
    if (k === 'amp') return '&';
    if (k === 'lt') return '<';
    if (k === 'gt') return '>';
    if (k === 'quot') return '"';
    if (k === 'apos' || k === '#39') return "'";
    return String.fromCodePoint(k.startsWith('#x') ? parseInt(k.slice(2), 16) : parseInt(k.slice(1), 10));
  });
}

function attrs(tag) {
  const out = {};
  for (const m of tag.matchAll(/([a-zA-Z_:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

// parseForm returns the page's single POST form: its action, hidden fields, other inputs and
// submit buttons.
export function parseForm(html) {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)];
  assert.equal(forms.length, 1, 'the page has exactly one form:\n' + html);
  const form = attrs(forms[0][1]);
  assert.equal(form.method?.toLowerCase(), 'post');
  const hidden = {};
  const inputs = [];
  for (const m of forms[0][2].matchAll(/<input\b([^>]*)>/gi)) {
    const a = attrs(m[1]);
    if (a.type === 'hidden') hidden[a.name] = a.value ?? '';
    else inputs.push(a);
  }
  const buttons = [...forms[0][2].matchAll(/<button\b([^>]*)>/gi)].map((m) => attrs(m[1]));
  return { action: form.action, hidden, inputs, buttons };
}

// CookieJar keeps the cookies one origin sets, as a browser would for this flow.
export class CookieJar {
  constructor() { this.cookies = new Map(); }
  take(res) {
    for (const sc of res.headers.getSetCookie()) {
      const [pair] = sc.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (/;\s*max-age=(0|-\d+)/i.test(sc) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header() { return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '); }
}

// authorizeInBrowser plays the owner's browser from the authorization URL to the redirect back to
// the client: it follows redirects within the server, signs in on the login page, answers the
// consent page with `decision` ("allow" or "deny") and returns the redirect URI it was sent to (not
// fetched), with the pages it saw. A jar passed in keeps the login session between calls.
export async function authorizeInBrowser(authorizationUrl, { username = OWNER, password = PASSWORD, decision = 'allow', jar = new CookieJar(), onPage } = {}) {
  const start = new URL(authorizationUrl);
  const pages = [];
  let signedIn = false;
  let res = await browserFetch(jar, start, { method: 'GET' });
  for (let hops = 0; hops < 10; hops++) {
    if (res.status === 302 || res.status === 303) {
      const to = new URL(res.headers.get('location'), start);
      await res.body?.cancel();
      if (to.origin !== start.origin) return { redirect: to, pages, jar };
      res = await browserFetch(jar, to, { method: 'GET' });
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, `${res.url}: ${html}`);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const form = parseForm(html);
    const page = { url: res.url, status: res.status, headers: res.headers, html, form };
    pages.push(page);
    await onPage?.(page);
    let fields;
    if (form.action === '/oauth/login') {
      assert.ok(!signedIn, 'the login page came back after signing in (wrong password?):\n' + html);
      signedIn = true;
      assert.deepEqual(Object.keys(form.hidden).sort(), ['csrf', 'txn']);
      assert.deepEqual(form.inputs.map((i) => i.name).sort(), ['password', 'username']);
      fields = { ...form.hidden, username, password };
    } else if (form.action === '/oauth/consent') {
      assert.deepEqual(Object.keys(form.hidden).sort(), ['csrf', 'txn']);
      assert.deepEqual(form.buttons.map((b) => `${b.name}=${b.value}`).sort(), ['action=allow', 'action=deny']);
      fields = { ...form.hidden, action: decision };
      // Allow counts only once the page has been shown for a second (the server checks).
      if (decision === 'allow') await new Promise((r) => setTimeout(r, 1000));
    } else {
      assert.fail(`unexpected form action ${form.action}`);
    }
    res = await browserFetch(jar, new URL(form.action, start), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: start.origin },
      body: new URLSearchParams(fields).toString(),
    });
  }
  assert.fail('too many pages before the redirect back to the client');
}

async function browserFetch(jar, url, init) {
  const headers = { ...(init.headers ?? {}) };
  const cookie = jar.header();
  if (cookie) headers.cookie = cookie;
  const res = await fetch(url, { ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(15000) });
  jar.take(res);
  return res;
}

// payload calls a tool and returns its structured payload, checking it equals content[0].text.
export async function payload(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.content[0].type, 'text');
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, `${name}: text and structuredContent differ`);
  return { ...res.structuredContent, isError: res.isError };
}
