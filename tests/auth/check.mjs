// The end-to-end checks of scripts/auth, from outside: BesluitBron (Mode = required) behind
// a real OpenID provider (provider.mjs), on the fake platforms.
//
//   node check.mjs main    SERVER ISSUER KEYS_FILE REDIRECT_URI TOKENS_FILE
//   node check.mjs rotated SERVER ISSUER KEYS_FILE REDIRECT_URI TOKENS_FILE
//
// `main`: no token → 401 with the metadata link; the metadata names resource and issuer;
// client-credentials tokens of two clients (two users) work; wrong audience, expired,
// another issuer and `alg: none` → 401; a session opened by one user is
// refused (404) to the other; the two users flood from one address and are limited apart;
// then the official TypeScript MCP SDK's OAuth client (authorization code with PKCE, the
// login scripted through the provider's interaction endpoints) lists the tools.
// `rotated` (after the provider restarted with a new signing key): a token signed with the
// new key works; one signed by a key never published → 401. Every token used is appended to TOKENS_FILE (the script checks that none
// reached the server's log). Prints one line per check; exits 1 on the first failure.
import { appendFileSync, readFileSync } from 'node:fs';
import { SignJWT, exportJWK, importJWK, generateKeyPair } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [phase, server, issuer, keysFile, redirectUri, tokensFile] = process.argv.slice(2);
const resource = `${server}/mcp`;
const metadataUrl = (path) => `${server}/.well-known/oauth-protected-resource${path}`;

function check(ok, what, detail = '') {
    if (!ok) {
        console.error(`auth: FAIL ${what}${detail ? `: ${detail}` : ''}`);
        process.exit(1);
    }
    console.log(`auth: ok   ${what}`);
}

function used(token) {
    appendFileSync(tokensFile, `${token}\n`);
    return token;
}

/** A 2026-07-28 (stateless) tools/list at `path` with `token`, or a legacy request with `session`. */
async function mcp(path, token, { body, session, legacy } = {}) {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    let message = body ?? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    if (legacy || session) {
        headers['mcp-protocol-version'] = '2025-06-18';
        if (session) headers['mcp-session-id'] = session;
    } else {
        headers['mcp-protocol-version'] = '2026-07-28';
        headers['mcp-method'] = message.method;
        if (message.params?.name) headers['mcp-name'] = message.params.name;
        message = {
            ...message,
            params: {
                ...message.params,
                _meta: {
                    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                    'io.modelcontextprotocol/clientCapabilities': {},
                },
            },
        };
    }
    const res = await fetch(`${server}${path}`, { method: 'POST', headers, body: JSON.stringify(message) });
    return { status: res.status, headers: res.headers, text: await res.text() };
}

/** An access token for client `id` by client credentials, for `audience`. */
async function clientToken(id, audience = resource) {
    const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${id}:${id}-secret`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource: audience }),
    });
    const body = await res.json();
    if (!body.access_token) throw new Error(`no token for ${id}: ${JSON.stringify(body)}`);
    return used(body.access_token);
}

/** A token signed with the provider's own key `jwk` (or another), with `claims` changed. */
async function forged(jwk, claims) {
    const key = await importJWK(jwk, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    return used(
        await new SignJWT({ scope: 'mcp', ...claims.extra })
            .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
            .setIssuer(claims.iss ?? issuer)
            .setSubject('mallory')
            .setAudience(claims.aud ?? resource)
            .setIssuedAt(now - 600)
            .setExpirationTime(claims.exp ?? now + 600)
            .sign(key),
    );
}

const b64 = (s) => Buffer.from(s).toString('base64url');

if (phase === 'rotated') {
    // Bob's: alice has used up her limit flooding.
    const token = await clientToken('bob');
    const kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url')).kid;
    const keys = JSON.parse(readFileSync(keysFile, 'utf8'));
    check(kid === keys[0].kid && keys.length > 1, `the provider signs with its new key ${kid}`);
    const r = await mcp('/mcp', token);
    check(r.status === 200, 'a token signed with the rotated-in key is served', `${r.status} ${r.text}`);
    // After the rotation (a key id BesluitBron had not seen makes it fetch the keys once;
    // made-up ids then wait 30 s), a key the provider never published.
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const stranger = { ...(await exportJWK(privateKey)), kid: 'not-published' };
    const u = await mcp('/mcp', await forged(stranger, {}));
    check(
        u.status === 401 && (u.headers.get('www-authenticate') ?? '').includes('error="invalid_token"'),
        'a token signed by a key the provider does not publish: 401 invalid_token',
        `${u.status} ${u.headers.get('www-authenticate')}`,
    );
    process.exit(0);
}

// --- no token, the metadata ------------------------------------------------------------
for (const path of ['/mcp', '/mcp/obv']) {
    const r = await mcp(path, null);
    check(
        r.status === 401 && r.headers.get('www-authenticate') === `Bearer resource_metadata="${metadataUrl(path)}"`,
        `no token at ${path}: 401 with the metadata link`,
        `${r.status} ${r.headers.get('www-authenticate')}`,
    );
}
const metadata = await (await fetch(metadataUrl('/mcp'))).json();
check(
    metadata.resource === resource && metadata.authorization_servers?.[0] === issuer,
    'the metadata names the resource and the issuer',
    JSON.stringify(metadata),
);

// --- valid tokens of two users ------------------------------------------------------------
const alice = await clientToken('alice');
const bob = await clientToken('bob');
check((await mcp('/mcp', alice)).status === 200, "alice's token is served");
const call = await mcp('/mcp/obv', bob, {
    body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'obv_search', arguments: { query: 'begroting', limit: 2 } } },
});
check(call.status === 200 && call.text.includes('"result"'), "bob's token is served, through to a platform", call.text.slice(0, 300));

// --- tokens that do not pass ----------------------------------------------------------------
const [signing] = JSON.parse(readFileSync(keysFile, 'utf8'));
const now = Math.floor(Date.now() / 1000);
const refused = {
    'a token for another resource (audience)': await clientToken('alice', 'https://elsewhere.test/mcp'),
    'an expired token': await forged(signing, { exp: now - 300 }),
    "another issuer's token": await forged(signing, { iss: 'https://other-issuer.test' }),
    'an unsigned token (alg none)': used(`${b64('{"alg":"none","typ":"JWT"}')}.${b64(JSON.stringify({ iss: issuer, sub: 'mallory', aud: resource, exp: now + 600 }))}.`),
};
for (const [what, token] of Object.entries(refused)) {
    const r = await mcp('/mcp', token);
    check(
        r.status === 401 && (r.headers.get('www-authenticate') ?? '').includes('error="invalid_token"'),
        `${what}: 401 invalid_token`,
        `${r.status} ${r.headers.get('www-authenticate')}`,
    );
}

// --- a session is its user's ----------------------------------------------------------------
const init = await mcp('/mcp', alice, {
    legacy: true,
    body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'scripts/auth', version: '1' } } },
});
const session = init.headers.get('mcp-session-id');
check(init.status === 200 && session, 'alice opens a session', `${init.status} ${init.text.slice(0, 200)}`);
await mcp('/mcp', alice, { session, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
check((await mcp('/mcp', alice, { session })).status === 200, 'alice uses her session');
const stolen = await mcp('/mcp', bob, { session });
check(stolen.status === 404, "bob naming alice's session: 404", `${stolen.status} ${stolen.text.slice(0, 200)}`);

// --- two users behind one address: limited apart ---------------------------------------------
let floods = 0;
let last;
do {
    last = await mcp('/mcp', alice);
    floods += 1;
} while (last.status === 200 && floods < 100);
check(last.status === 429 && last.text.includes('user'), `alice floods: refused after ${floods} requests (her own limit)`, `${last.status} ${last.text}`);
const other = await mcp('/mcp', bob);
check(other.status === 200, 'bob, behind the same address, is served', `${other.status} ${other.text}`);

// --- the official TypeScript SDK's OAuth client ------------------------------------------------
/** Follows the provider's redirects from `url` with a cookie jar, logging in as `login` and
 * consenting at its development interaction forms, until the redirect URI; returns the code. */
async function scriptedLogin(url, login) {
    const jar = new Map();
    let next = url;
    let form = null;
    for (let step = 0; step < 20; step += 1) {
        const target = new URL(next, issuer);
        if (target.href.startsWith(redirectUri)) {
            return target.searchParams.get('code');
        }
        const init = { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } };
        if (form) {
            init.method = 'POST';
            init.headers['content-type'] = 'application/x-www-form-urlencoded';
            init.body = new URLSearchParams(form);
        }
        const res = await fetch(target, init);
        for (const c of res.headers.getSetCookie()) {
            const [pair] = c.split(';');
            const at = pair.indexOf('=');
            jar.set(pair.slice(0, at), pair.slice(at + 1));
        }
        form = null;
        if (res.status >= 300 && res.status < 400) {
            next = res.headers.get('location');
            continue;
        }
        const html = await res.text();
        const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
        const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
        if (!action || !prompt) throw new Error(`no interaction form at ${target}: ${res.status} ${html.slice(0, 300)}`);
        form = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
        next = action;
    }
    throw new Error('the login did not reach the redirect URI');
}

class ScriptedProvider {
    constructor() {
        this.saved = {};
    }
    get redirectUrl() {
        return redirectUri;
    }
    get clientMetadata() {
        return { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'], scope: 'openid mcp', client_name: 'scripts/auth' };
    }
    clientInformation() {
        return { client_id: 'mcp-sdk' };
    }
    tokens() {
        return this.saved.tokens;
    }
    saveTokens(tokens) {
        this.saved.tokens = tokens;
        used(tokens.access_token);
    }
    redirectToAuthorization(url) {
        this.authorizationUrl = url;
    }
    saveCodeVerifier(v) {
        this.verifier = v;
    }
    codeVerifier() {
        return this.verifier;
    }
}

const oauth = new ScriptedProvider();
const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: oauth });
try {
    await new Client({ name: 'scripts/auth', version: '1' }).connect(first);
    check(false, 'the SDK client is asked to log in');
} catch (e) {
    check(e instanceof UnauthorizedError && oauth.authorizationUrl, 'the SDK client finds the issuer and starts the authorization', String(e));
}
const authUrl = new URL(oauth.authorizationUrl);
check(
    authUrl.searchParams.get('resource') === resource && authUrl.searchParams.get('code_challenge_method') === 'S256',
    'its authorization request names the resource and uses PKCE (S256)',
    authUrl.href,
);
const code = await scriptedLogin(authUrl.href, 'carol');
await first.finishAuth(code);
check(oauth.saved.tokens?.access_token, 'the SDK client exchanged the code for an access token');
const client = new Client({ name: 'scripts/auth', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: oauth }));
const { tools } = await client.listTools();
// /mcp's whole list: the stand-ins and the tools no stand-in takes (the votes, the meetings).
const names = new Set(tools.map((t) => t.name));
check(
  ['search', 'fetch', 'lists', 'tk_votes', 'tk_debates'].every((n) => names.has(n)),
  `the SDK client lists ${tools.length} tools as carol (${[...names].sort().join(', ')})`,
);
await client.close();
