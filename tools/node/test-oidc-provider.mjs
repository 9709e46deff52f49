// A real OAuth 2.0 authorization server for skillwire's tests: oidc-provider on 127.0.0.1 (loopback only).
//
//   SIGNING_JWK='{"kty":"EC","crv":"P-256","d":...,"kid":...}' node test-oidc-provider.mjs CLIENT_SECRET
//
// Listens on a free port and prints one JSON line {"issuer": ...} on stdout when ready; stops on SIGTERM.
// One client, "skillwire-test" (client_secret_basic), may use the client-credentials grant for the scopes
// skills:read and skills:admin. With a `resource` parameter (RFC 8707) the access token is a JWT (RFC 9068),
// signed ES256, whose audience is that resource: any http://127.0.0.1 or http://localhost URL is accepted,
// so a test can also get a token for another resource. The ES256 key is SIGNING_JWK when given (a private
// P-256 JWK the test made, so it can also sign tokens this issuer would publish), else one made at start.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';

const clientSecret = process.argv[2];
if (!clientSecret) {
  console.error('usage: node test-oidc-provider.mjs CLIENT_SECRET');
  process.exit(2);
}

function signingKey(type, options, alg) {
  const { privateKey } = generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg, use: 'sig' };
}

const jwks = {
  keys: [
    process.env.SIGNING_JWK
      ? { ...JSON.parse(process.env.SIGNING_JWK), alg: 'ES256', use: 'sig' }
      : signingKey('ec', { namedCurve: 'P-256' }, 'ES256'),
    signingKey('rsa', { modulusLength: 2048 }, 'RS256'), // oidc-provider signs ID tokens RS256 by default
  ],
};

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//;

const configuration = {
  clients: [
    {
      client_id: 'skillwire-test',
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: 'skills:read skills:admin',
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['skills:read', 'skills:admin'],
  ttl: { ClientCredentials: 300 },
  jwks,
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    introspection: { enabled: false },
    revocation: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (!LOOPBACK.test(resource)) throw new errors.InvalidTarget();
        return {
          scope: 'skills:read skills:admin',
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
};

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
