// End-to-end OAuth: the official MCP TypeScript SDK client, with an OAuthClientProvider of ours,
// signs in to the real ownsona binary the way an MCP host does: protected resource and
// authorization server discovery, dynamic client registration, authorization with PKCE (the
// owner's browser played with fetch: login form, consent form, redirect back), code exchange,
// tool calls with the access token, refresh (forced, and after the access token stops working),
// revocation, and scopes (a memories:read token sees and may call only the read tools).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ALL_TOOLS, READ_TOOLS, CookieJar, authorizeInBrowser, defer, payload, startServe } from './helpers.mjs';

// A loopback redirect URI as native MCP hosts register. Nothing listens there: the client reads
// the code from the consent page's 303 Location without following it.
const REDIRECT = 'http://127.0.0.1:33418/oauth/callback';

// recorder wraps fetch and keeps what went over the wire, for the tests to check.
function recorder() {
  const calls = [];
  const recFetch = async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const res = await fetch(input, { ...init, signal: init.signal ?? AbortSignal.timeout(15000) });
    const body = init.body instanceof URLSearchParams ? init.body.toString() : typeof init.body === 'string' ? init.body : undefined;
    calls.push({ method: init.method ?? 'GET', path: url.pathname, url, body, status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') });
    return res;
  };
  return { calls, fetch: recFetch, since: (n) => calls.slice(n) };
}

const form = (call) => new URLSearchParams(call.body ?? '');

// TestProvider is an in-memory OAuthClientProvider: a public client (no secret) with a loopback
// redirect URI, whose redirectToAuthorization is the owner in a browser, allowing (or denying)
// the request, and checking the authorization response as an RFC 9207 client does.
class TestProvider {
  constructor({ clientName, decision = 'allow' }) {
    this.clientName = clientName;
    this.decision = decision;
    this.jar = new CookieJar(); // the browser's cookies, kept between authorizations
    this.authorizations = []; // {url, redirect, pages}
    this.savedTokens = [];
    this.invalidated = [];
  }

  get redirectUrl() { return REDIRECT; }

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      software_id: 'ownsona-e2e',
      software_version: '1.0.0',
    };
  }

  state() {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.current; }
  saveTokens(tokens) { this.current = tokens; this.savedTokens.push(tokens); }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { assert.ok(this.verifier, 'a code verifier was saved'); return this.verifier; }
  saveDiscoveryState(state) { this.discovery = state; }
  discoveryState() { return this.discovery; }

  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }

  async redirectToAuthorization(url) {
    const { redirect, pages } = await authorizeInBrowser(url, { decision: this.decision, jar: this.jar });
    this.authorizations.push({ url, redirect, pages });
    assert.equal(redirect.origin + redirect.pathname, REDIRECT, 'the browser is sent back to the registered redirect URI');
    assert.equal(redirect.searchParams.get('state'), this.lastState, 'state comes back unchanged');
    const meta = this.discovery?.authorizationServerMetadata;
    assert.equal(meta?.authorization_response_iss_parameter_supported, true);
    assert.equal(redirect.searchParams.get('iss'), meta.issuer, 'RFC 9207: iss is the metadata issuer, byte for byte');
    this.code = redirect.searchParams.get('code') ?? undefined;
  }
}

// jwtClaims checks an access token's signature against the server's JWKS and returns its claims.
async function jwtClaims(jwksUri, jwt) {
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url'));
  const { keys } = await (await fetch(jwksUri, { signal: AbortSignal.timeout(10000) })).json();
  const jwk = keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, `the JWKS publishes the key ${header.kid}`);
  assert.equal(header.alg, 'EdDSA');
  assert.equal(header.typ, 'at+jwt', 'RFC 9068 access token');
  assert.ok(verify(null, Buffer.from(`${h}.${p}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(s, 'base64url')), 'the signature verifies');
  return JSON.parse(Buffer.from(p, 'base64url'));
}

function connect(srv, provider, net, name) {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(srv.url), { authProvider: provider, fetch: net.fetch });
  return { client, transport };
}

test('oauth: the TypeScript SDK client registers, signs in, calls tools, refreshes and is revoked', { timeout: 90000 }, async (t) => {
  const srv = await startServe(t);
  const net = recorder();
  const name = 'ownsona e2e (TypeScript SDK)';
  const provider = new TestProvider({ clientName: name });
  let client;

  await t.test('a first connect discovers, registers and sends the owner to sign in', async () => {
    const first = connect(srv, provider, net, 'e2e-oauth');
    defer(t, () => first.client.close());
    await assert.rejects(first.client.connect(first.transport), UnauthorizedError, 'connect ends in a redirect to authorization');

    const [unauth] = net.calls;
    assert.equal(unauth.method, 'POST');
    assert.equal(unauth.path, '/mcp');
    assert.equal(unauth.status, 401);
    assert.equal(unauth.wwwAuthenticate, `Bearer realm="ownsona", resource_metadata="${srv.origin}/.well-known/oauth-protected-resource/mcp", scope="memories:read memories:write"`);
    const paths = net.calls.map((c) => `${c.method} ${c.path} ${c.status}`);
    assert.ok(paths.includes('GET /.well-known/oauth-protected-resource/mcp 200'), paths.join('\n'));
    assert.ok(paths.some((p) => /^GET \/\.well-known\/(oauth-authorization-server|openid-configuration) 200$/.test(p)), paths.join('\n'));
    assert.ok(paths.includes('POST /oauth/register 201'), paths.join('\n'));

    const d = provider.discovery;
    assert.equal(d.authorizationServerUrl.replace(/\/$/, ''), srv.issuer);
    assert.equal(d.resourceMetadata.resource, srv.url);
    assert.deepEqual(d.resourceMetadata.authorization_servers, [srv.issuer], 'byte-identical to the issuer, no trailing slash');
    assert.equal(d.authorizationServerMetadata.issuer, srv.issuer);
    assert.deepEqual(d.authorizationServerMetadata.code_challenge_methods_supported, ['S256']);

    assert.equal(provider.client.client_name, name);
    assert.match(provider.client.client_id, /\S{16,}/);
    assert.equal(provider.client.client_secret, undefined, 'a public client gets no secret');
    assert.equal(provider.client.token_endpoint_auth_method, 'none');
    assert.deepEqual(provider.client.redirect_uris, [REDIRECT]);

    assert.equal(provider.authorizations.length, 1);
    const { url, pages } = provider.authorizations[0];
    const q = url.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), provider.client.client_id);
    assert.equal(q.get('redirect_uri'), REDIRECT);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get('resource'), srv.url, 'RFC 8707 resource is the MCP URL');
    assert.equal(q.get('scope'), 'memories:read memories:write', 'the scope of the 401 challenge');
    assert.deepEqual(pages.map((p) => p.form.action), ['/oauth/login', '/oauth/consent'], 'a login page, then a consent page');
    assert.match(pages[0].html, new RegExp(name.replace(/[()]/g, '\\$&')), 'the login page names the client');
    assert.match(pages[1].html, /127\.0\.0\.1:33418/, 'the consent page shows where access goes');
    assert.match(provider.code, /^\S{20,}$/);
  });

  await t.test('finishAuth exchanges the code with the PKCE verifier for tokens', async () => {
    const mark = net.calls.length;
    const transport = new StreamableHTTPClientTransport(new URL(srv.url), { authProvider: provider, fetch: net.fetch });
    await transport.finishAuth(provider.code);
    const tokenCalls = net.since(mark).filter((c) => c.path === '/oauth/token');
    assert.equal(tokenCalls.length, 1);
    assert.equal(tokenCalls[0].status, 200);
    const f = form(tokenCalls[0]);
    assert.equal(f.get('grant_type'), 'authorization_code');
    assert.equal(f.get('code'), provider.code);
    assert.equal(f.get('code_verifier'), provider.verifier);
    assert.equal(f.get('client_id'), provider.client.client_id);
    assert.equal(f.get('resource'), srv.url);

    const tok = provider.current;
    assert.equal(tok.token_type.toLowerCase(), 'bearer');
    assert.equal(tok.scope, 'memories:read memories:write');
    assert.ok(tok.expires_in > 0 && tok.expires_in <= 3600);
    assert.match(tok.refresh_token, /^\S{20,}$/);
    const claims = await jwtClaims(provider.discovery.authorizationServerMetadata.jwks_uri, tok.access_token);
    assert.equal(claims.iss, srv.issuer);
    assert.equal(claims.aud, srv.url, 'the access token is bound to the MCP resource');
    assert.equal(claims.client_id, provider.client.client_id);
    assert.equal(claims.scope, 'memories:read memories:write');
    assert.ok(claims.exp > Date.now() / 1000);

  });

  await t.test('with the token the client connects, lists every tool, remembers and recalls', async () => {
    const second = connect(srv, provider, net, 'e2e-oauth');
    client = second.client;
    await client.connect(second.transport);
    defer(t, () => client.close());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), [...ALL_TOOLS].sort());
    const saved = await payload(client, 'remember', { text: 'My bike is a green Brompton', tags: ['bike'] });
    assert.equal(saved.ok, true);
    const found = await payload(client, 'recall', { query: 'Brompton' });
    assert.equal(found.matches[0].id, saved.memory_id);
    const got = await payload(client, 'get_memory', { id: saved.memory_id });
    assert.equal(got.memory.source_client, name, 'source_client is the registered client_name');
  });

  await t.test('a forced refresh rotates the tokens and the tools keep working', async () => {
    const before = provider.current;
    const mark = net.calls.length;
    assert.equal(await auth(provider, { serverUrl: new URL(srv.url), fetchFn: net.fetch }), 'AUTHORIZED');
    const refresh = net.since(mark).filter((c) => c.path === '/oauth/token');
    assert.equal(refresh.length, 1);
    assert.equal(form(refresh[0]).get('grant_type'), 'refresh_token');
    assert.equal(form(refresh[0]).get('refresh_token'), before.refresh_token);
    assert.equal(refresh[0].status, 200);
    assert.notEqual(provider.current.access_token, before.access_token);
    assert.notEqual(provider.current.refresh_token, before.refresh_token, 'refresh tokens rotate');
    assert.equal(provider.current.scope, 'memories:read memories:write');
    const mcp = net.calls.length;
    assert.equal((await payload(client, 'count_memories')).count, 1);
    const used = net.since(mcp).find((c) => c.path === '/mcp');
    assert.equal(used.status, 200);
  });

  await t.test('when the access token stops working the SDK refreshes on the 401 and retries', async () => {
    const before = provider.current;
    provider.current = { ...before, access_token: before.access_token.slice(0, -4) + 'AAAA' }; // a bad signature
    const mark = net.calls.length;
    const found = await payload(client, 'recall', { query: 'bike' });
    assert.match(found.matches[0].text, /Brompton/);
    const seen = net.since(mark).map((c) => `${c.method} ${c.path} ${c.status}`);
    const i401 = seen.indexOf('POST /mcp 401');
    assert.ok(i401 >= 0, seen.join('\n'));
    assert.match(net.since(mark)[i401].wwwAuthenticate, /error="invalid_token"/);
    const iRefresh = seen.indexOf('POST /oauth/token 200');
    assert.ok(iRefresh > i401, 'then a refresh: ' + seen.join('\n'));
    assert.equal(form(net.since(mark)[iRefresh]).get('grant_type'), 'refresh_token');
    assert.equal(seen.at(-1), 'POST /mcp 200', 'and the call is retried with the new token');
    assert.notEqual(provider.current.refresh_token, before.refresh_token);
  });

  await t.test('revoking the refresh token ends the grant; the SDK sends the owner back, who is still signed in', async () => {
    const old = provider.current;
    const rv = await fetch(`${srv.origin}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: old.refresh_token, token_type_hint: 'refresh_token', client_id: provider.client.client_id }),
      signal: AbortSignal.timeout(10000),
    });
    assert.equal(rv.status, 200);
    const mark = net.calls.length;
    await assert.rejects(payload(client, 'count_memories'), UnauthorizedError, 'the grant is gone: refresh fails, a new authorization starts');
    const seen = net.since(mark).map((c) => `${c.method} ${c.path} ${c.status}`);
    assert.equal(seen[0], 'POST /mcp 401', 'the access token of the revoked grant is refused at once');
    assert.ok(seen.includes('POST /oauth/token 400'), 'the revoked refresh token is refused: ' + seen.join('\n'));
    assert.ok(provider.invalidated.includes('tokens'), 'the SDK dropped the tokens on invalid_grant');
    assert.equal(provider.authorizations.length, 2);
    assert.deepEqual(provider.authorizations[1].pages.map((p) => p.form.action), ['/oauth/consent'], 'the login session skips the login page');

    await client.transport.finishAuth(provider.code);
    assert.equal((await payload(client, 'count_memories')).count, 1, 'a new grant works');
    const replay = await fetch(`${srv.origin}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: old.refresh_token, client_id: provider.client.client_id }),
      signal: AbortSignal.timeout(10000),
    });
    assert.equal(replay.status, 400);
    assert.equal((await replay.json()).error, 'invalid_grant');
  });
});

test('oauth: a memories:read grant sees only read tools and remember gets 403 insufficient_scope', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const net = recorder();
  const provider = new TestProvider({ clientName: 'ownsona e2e reader' });

  // Ask for less than the server's challenge: auth() with an explicit scope, as a host that
  // wants read access only would.
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), scope: 'memories:read', fetchFn: net.fetch }), 'REDIRECT');
  const { url, pages } = provider.authorizations[0];
  assert.equal(url.searchParams.get('scope'), 'memories:read');
  const consent = pages.at(-1).html;
  assert.match(consent, /memories:read/);
  assert.doesNotMatch(consent, /memories:write/, 'the consent page lists only what is asked');
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), authorizationCode: provider.code, fetchFn: net.fetch }), 'AUTHORIZED');
  assert.equal(provider.current.scope, 'memories:read');

  const client = new Client({ name: 'e2e-reader', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(srv.url), { authProvider: provider, fetch: net.fetch }));
  defer(t, () => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), [...READ_TOOLS].sort(), 'tools/list shows only what the token may call');
  assert.ok(tools.every((x) => x.annotations.readOnlyHint === true));
  assert.equal((await payload(client, 'count_memories')).count, 0, 'read tools work');

  const mark = net.calls.length;
  const err = await client.callTool({ name: 'remember', arguments: { text: 'must not be stored' } }).catch((e) => e);
  assert.ok(err instanceof StreamableHTTPError, `remember fails: ${err}`);
  assert.equal(err.code, 403);
  const refused = net.since(mark).filter((c) => c.path === '/mcp' && c.status === 403);
  assert.ok(refused.length >= 1, 'the server answered 403');
  for (const r of refused) assert.match(r.wwwAuthenticate, /^Bearer .*error="insufficient_scope"/);
  assert.match(refused[0].wwwAuthenticate, /resource_metadata="[^"]+"/);
  assert.equal(provider.current.scope, 'memories:read', 'the SDK\'s step-up refresh did not widen the grant');
  assert.equal((await payload(client, 'count_memories')).count, 0, 'nothing was stored');
});

test('oauth: when the owner denies, the client gets access_denied with state and iss and no code', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const net = recorder();
  const provider = new TestProvider({ clientName: 'ownsona e2e denied', decision: 'deny' });
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), fetchFn: net.fetch }), 'REDIRECT');
  const { redirect } = provider.authorizations[0];
  assert.equal(redirect.searchParams.get('error'), 'access_denied');
  assert.equal(redirect.searchParams.get('code'), null);
  assert.equal(provider.code, undefined);
});

test('oauth: a replayed authorization code is refused and revokes the tokens issued from it', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const net = recorder();
  const provider = new TestProvider({ clientName: 'ownsona e2e replay' });
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), fetchFn: net.fetch }), 'REDIRECT');
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), authorizationCode: provider.code, fetchFn: net.fetch }), 'AUTHORIZED');
  const tok = provider.current;
  const ping = (access) => fetch(srv.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${access}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal((await ping(tok.access_token)).status, 200);

  const replay = await fetch(`${srv.origin}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'authorization_code', code: provider.code, code_verifier: provider.verifier, client_id: provider.client.client_id, redirect_uri: REDIRECT, resource: srv.url }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(replay.status, 400);
  assert.equal((await replay.json()).error, 'invalid_grant');
  const refused = await ping(tok.access_token);
  assert.equal(refused.status, 401, 'RFC 6749 4.1.2: tokens issued from a replayed code are revoked');
  assert.match(refused.headers.get('www-authenticate'), /error="invalid_token"/);
  const refresh = await fetch(`${srv.origin}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tok.refresh_token, client_id: provider.client.client_id }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(refresh.status, 400);
  assert.equal((await refresh.json()).error, 'invalid_grant');
});

test('oauth: once client and redirect URI are known good, an invalid request goes back to the client as an error with state and iss', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const meta = await (await fetch(`${srv.origin}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(10000) })).json();
  const reg = await fetch(`${srv.origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'ownsona e2e errors', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(reg.status, 201);
  const { client_id } = await reg.json();
  const challenge = randomBytes(32).toString('base64url');
  const authorize = (params) => fetch(`${meta.authorization_endpoint}?${new URLSearchParams({
    response_type: 'code', client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256',
    state: 'st-e2e', resource: srv.url, ...params,
  })}`, { redirect: 'manual', signal: AbortSignal.timeout(10000) });
  for (const [params, error] of [
    [{ scope: 'memories:read admin' }, 'invalid_scope'],
    [{ code_challenge: '' }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
  ]) {
    const res = await authorize(params);
    assert.equal(res.status, 302, `${error}: a redirect to the client`);
    const loc = new URL(res.headers.get('location'));
    assert.equal(loc.origin + loc.pathname, REDIRECT);
    assert.equal(loc.searchParams.get('error'), error);
    assert.ok(loc.searchParams.get('error_description'));
    assert.equal(loc.searchParams.get('state'), 'st-e2e');
    assert.equal(loc.searchParams.get('iss'), meta.issuer, 'RFC 9207 iss, byte for byte the metadata issuer');
    assert.equal(loc.searchParams.get('code'), null);
  }
  // An unregistered redirect URI is never redirected to.
  const res = await authorize({ redirect_uri: 'http://127.0.0.1:33419/elsewhere', scope: 'admin' });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('location'), null);
});

test('oauth: offline_access is accepted and listed, never widens the grant, and a refresh token comes either way', { timeout: 60000 }, async (t) => {
  const srv = await startServe(t);
  const meta = await (await fetch(`${srv.origin}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(10000) })).json();
  assert.deepEqual(meta.scopes_supported, ['memories:read', 'memories:write', 'offline_access']);
  const net = recorder();
  const provider = new TestProvider({ clientName: 'ownsona e2e offline' });
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), scope: 'memories:read offline_access', fetchFn: net.fetch }), 'REDIRECT');
  assert.equal(new URL(provider.authorizations[0].url).searchParams.get('scope'), 'memories:read offline_access');
  assert.equal(await auth(provider, { serverUrl: new URL(srv.url), authorizationCode: provider.code, fetchFn: net.fetch }), 'AUTHORIZED');
  assert.equal(provider.current.scope, 'memories:read offline_access');
  assert.ok(provider.current.refresh_token, 'a refresh token');
  const claims = await jwtClaims(meta.jwks_uri, provider.current.access_token);
  assert.equal(claims.scope, 'memories:read', 'the access token carries the memories scopes only');
  const { client, transport } = connect(srv, provider, net, 'ownsona-e2e-offline');
  await client.connect(transport);
  defer(t, () => client.close());
  const names = (await client.listTools()).tools.map((x) => x.name);
  for (const n of READ_TOOLS) assert.ok(names.includes(n), `${n} is listed`);
  for (const n of ALL_TOOLS.filter((x) => !READ_TOOLS.includes(x))) assert.ok(!names.includes(n), `${n} needs memories:write: not listed`);
});

test('oauth: OWNSONA_ALLOW_ARGUMENT_TOKENS=1 lets a plain JSON-RPC client send its token as the access_token argument', { timeout: 60000 }, async (t) => {
  const call = (srv, args, headers = {}) => fetch(srv.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'remember', arguments: args } }),
    signal: AbortSignal.timeout(10000),
  });
  const off = await startServe(t, { pats: { script: undefined } });
  const refused = await call(off, { text: 'needs the setting', access_token: off.tokens.script });
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get('www-authenticate'), /^Bearer realm="ownsona", resource_metadata="/);
  assert.match((await refused.json()).error.data.error_description, /OWNSONA_ALLOW_ARGUMENT_TOKENS=1/);

  const on = await startServe(t, { pats: { script: undefined }, env: { OWNSONA_ALLOW_ARGUMENT_TOKENS: '1' } });
  for (const key of ['access_token', 'accessToken']) {
    const res = await call(on, { text: `stored with ${key}`, [key]: on.tokens.script });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.result.isError, false, JSON.stringify(body));
    assert.equal(body.result.structuredContent.ok, true);
  }
  const list = await fetch(on.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { arguments: { access_token: on.tokens.script } } }),
    signal: AbortSignal.timeout(10000),
  });
  assert.equal(list.status, 401, 'only tools/call may carry the token in its arguments');
  assert.ok(!on.log().includes(on.tokens.script), 'the token is never logged');
});

// Issue 27, item 5: seed 001's clients are given /api/mcp (or /mcp/http). The official SDK checks
// RFC 9728 §3.3 (the metadata's resource must be the URL it was given), so each alias has metadata
// naming itself, its 401 points there, and the authorization server accepts it as the resource.
for (const path of ['/mcp', '/api/mcp', '/mcp/http']) {
  test(`oauth: the TypeScript SDK signs in at ${path} and lists the tools`, { timeout: 60000 }, async (t) => {
    const srv = await startServe(t);
    const url = srv.origin + path;
    const net = recorder();
    const provider = new TestProvider({ clientName: `ownsona e2e at ${path}` });
    const first = new Client({ name: 'e2e-alias', version: '1.0.0' });
    defer(t, () => first.close());
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: net.fetch })),
      UnauthorizedError, 'connect ends in a redirect to authorization');

    const [unauth] = net.calls;
    assert.equal(`${unauth.method} ${unauth.path} ${unauth.status}`, `POST ${path} 401`);
    assert.match(unauth.wwwAuthenticate, new RegExp(`resource_metadata="${srv.origin}/\\.well-known/oauth-protected-resource${path}"`),
      'the 401 points at the metadata of the path it was sent to');
    assert.equal(provider.discovery.resourceMetadata.resource, url, 'RFC 9728 §3.3: the metadata names the URL the client was given');
    const q = provider.authorizations[0].url.searchParams;
    assert.equal(q.get('resource'), url, 'RFC 8707 resource is the alias');

    const mark = net.calls.length;
    await new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: net.fetch }).finishAuth(provider.code);
    const exchange = net.since(mark).find((c) => c.path === '/oauth/token');
    assert.equal(exchange.status, 200);
    assert.equal(form(exchange).get('resource'), url);

    const client = new Client({ name: 'e2e-alias', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: net.fetch }));
    defer(t, () => client.close());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), [...ALL_TOOLS].sort());

    // One resource for tokens: the token obtained here is good at every path.
    for (const other of ['/mcp', '/api/mcp', '/mcp/http']) {
      const res = await fetch(srv.origin + other, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${provider.current.access_token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        signal: AbortSignal.timeout(10000),
      });
      assert.equal(res.status, 200, `a token obtained at ${path} works at ${other}`);
    }
  });
}
