// A real, certified OpenID provider (npm `oidc-provider`) on loopback, for scripts/auth:
// resource indicators on, so access tokens are JWTs (RS256) whose audience is BesluitBron's
// Resource; two clients by client credentials (their tokens' `sub` is the client id: two
// users), and a public client for the authorization code flow with PKCE (the MCP SDK's),
// whose login and consent are oidc-provider's own development interactions.
//
//   node provider.mjs PORT RESOURCE KEYS_FILE REDIRECT_URI [rotate]
//
// The signing keys live in KEYS_FILE (private JWKs, made on first start) so that the
// checks can sign tokens the provider would not (expired, another issuer) and a restart
// with `rotate` puts a new key first (the provider signs with it; the old one is still
// published). Prints "provider ready ISSUER" when it listens.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const [port, resource, keysFile, redirectUri, rotate] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
// A second resource, only to issue tokens for the wrong audience.
const elsewhere = 'https://elsewhere.test/mcp';

async function newKey(kid) {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

let keys = existsSync(keysFile) ? JSON.parse(readFileSync(keysFile, 'utf8')) : [await newKey('k1')];
if (rotate === 'rotate') {
    keys = [await newKey(`k${keys.length + 1}`), ...keys];
}
writeFileSync(keysFile, JSON.stringify(keys));

const provider = new Provider(issuer, {
    jwks: { keys },
    clients: [
        { client_id: 'alice', client_secret: 'alice-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
        { client_id: 'bob', client_secret: 'bob-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
        {
            client_id: 'mcp-sdk',
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code'],
            response_types: ['code'],
            redirect_uris: [redirectUri],
        },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'mcp'],
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        resourceIndicators: {
            enabled: true,
            defaultResource: () => resource,
            useGrantedResource: () => true,
            getResourceServerInfo: (ctx, indicator) => {
                if (indicator !== resource && indicator !== elsewhere) {
                    throw new Error(`unknown resource ${indicator}`);
                }
                return {
                    scope: 'mcp',
                    audience: indicator,
                    accessTokenTTL: 600,
                    accessTokenFormat: 'jwt',
                    jwt: { sign: { alg: 'RS256' } },
                };
            },
        },
    },
});
provider.listen(Number(port), '127.0.0.1', () => {
    console.log(`provider ready ${issuer}`);
});
