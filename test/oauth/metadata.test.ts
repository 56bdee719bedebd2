// Discovery as an MCP client does it: protected resource metadata (RFC 9728) for the service and
// path-suffixed for every /mcp/{server}, authorization server metadata (RFC 8414) at the root of
// the same origin, advertising exactly what is supported (code + PKCE S256, public and secret-holding clients, DCR,
// CIMD, RFC 9207 iss, revocation); with PUBLIC_BASE_URL, everything names the public origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { post, startTestService, toolCall } from '../helpers/service.ts';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { rawRequest } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;
let publicService: RunningService;
const PUBLIC = 'https://mcp.example.com';

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url);
  publicService = await startTestService(db.url, { PUBLIC_BASE_URL: PUBLIC });
});

afterAll(async () => {
  await publicService?.close();
  await service?.close();
  await db?.drop();
});

const getJson = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('protected resource metadata (RFC 9728)', () => {
  it('for the whole service: every server as a scope, this origin as the authorization server', async () => {
    const { status, body } = await getJson(`${service.url}/.well-known/oauth-protected-resource`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ resource: service.url, authorization_servers: [service.url], bearer_methods_supported: ['header'] });
    expect(body.scopes_supported).toEqual([...SERVER_NAMES]);
  });

  it.each(SERVER_NAMES)('path-suffixed for /mcp/%s, naming exactly that resource and scope', async (server) => {
    const { status, body } = await getJson(`${service.url}/.well-known/oauth-protected-resource/mcp/${server}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ resource: `${service.url}/mcp/${server}`, authorization_servers: [service.url], scopes_supported: [server] });
  });

  it('an unknown server has no metadata (404, JSON)', async () => {
    const { status, body } = await getJson(`${service.url}/.well-known/oauth-protected-resource/mcp/nope`);
    expect(status).toBe(404);
    expect(body).toMatchObject({ error: 'not_found' });
  });
});

describe('authorization server metadata (RFC 8414)', () => {
  it('advertises code + PKCE S256, public (and secret-holding) clients, DCR, CIMD, iss and revocation, endpoints under /oauth', async () => {
    const { status, body } = await getJson(`${service.url}/.well-known/oauth-authorization-server`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      issuer: service.url,
      authorization_endpoint: `${service.url}/oauth/authorize`,
      token_endpoint: `${service.url}/oauth/token`,
      registration_endpoint: `${service.url}/oauth/register`,
      revocation_endpoint: `${service.url}/oauth/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: expect.arrayContaining(['none', 'client_secret_post']),
      grant_types_supported: expect.arrayContaining(['authorization_code', 'refresh_token']),
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(body.scopes_supported).toEqual(expect.arrayContaining([...SERVER_NAMES]));
  });

  it('with PUBLIC_BASE_URL, the metadata and the 401 challenge name the public origin', async () => {
    const as = await getJson(`${publicService.url}/.well-known/oauth-authorization-server`);
    expect(as.body).toMatchObject({ issuer: PUBLIC, authorization_endpoint: `${PUBLIC}/oauth/authorize`, token_endpoint: `${PUBLIC}/oauth/token` });
    const prm = await getJson(`${publicService.url}/.well-known/oauth-protected-resource/mcp/market-intelligence`);
    expect(prm.body).toMatchObject({ resource: `${PUBLIC}/mcp/market-intelligence`, authorization_servers: [PUBLIC] });
    const unauthorized = await post(`${publicService.url}/mcp/market-intelligence`, toolCall('get_capabilities'));
    expect(unauthorized.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp/market-intelligence"`);
  });
});

describe('a forged Host or X-Forwarded-Host is never echoed (the issuer and every advertised URL come from configuration)', () => {
  const FORGED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

  // Behind a trusted proxy (X-Forwarded-* believed for the client address) and without PUBLIC_BASE_URL:
  // the origin is the URL the service listens on.
  it.each([
    ['no proxy trusted', {}],
    ['TRUST_PROXY_HOPS=1', { TRUST_PROXY_HOPS: '1' }],
  ])('%s: metadata, issuer, endpoints, the 401 challenge, the x402 resource URL and the authorize redirect name the configured origin', async (_label, env: Record<string, string>) => {
    // x402 on too (its 402 names the resource URL); no chain is reached before a payment arrives.
    const x402 = { X402_PAY_TO: `0x${'11'.repeat(20)}`, X402_SETTLEMENT_KEY: `0x${'22'.repeat(32)}`, X402_RPC_URL: 'http://127.0.0.1:9', X402_NETWORK: 'eip155:31337' };
    const s = await startTestService(db.url, { ...env, ...x402 });
    try {
      const origin = s.url;
      const as = await rawRequest(`${s.url}/.well-known/oauth-authorization-server`, { headers: FORGED });
      expect(as.status).toBe(200);
      expect(as.body).not.toContain('evil.example');
      expect(JSON.parse(as.body)).toMatchObject({ issuer: origin, authorization_endpoint: `${origin}/oauth/authorize`, token_endpoint: `${origin}/oauth/token` });
      const prm = await rawRequest(`${s.url}/.well-known/oauth-protected-resource/mcp/market-intelligence`, { headers: FORGED });
      expect(JSON.parse(prm.body)).toMatchObject({ resource: `${origin}/mcp/market-intelligence`, authorization_servers: [origin] });
      const unauthorized = await rawRequest(`${s.url}/mcp/market-intelligence`, {
        method: 'POST',
        headers: { ...FORGED, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(toolCall('get_capabilities')),
      });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers['www-authenticate']).toBe(`Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp/market-intelligence"`);
      const paid = await rawRequest(`${s.url}/x402/mcp/market-intelligence`, {
        method: 'POST',
        headers: { ...FORGED, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(toolCall('get_prices', { assets: ['bitcoin'] })),
      });
      expect(paid.status).toBe(402);
      expect(decodePaymentRequiredHeader(String(paid.headers['payment-required'])).resource.url).toBe(`${origin}/x402/mcp/market-intelligence`);
      const config = await rawRequest(`${s.url}/api/config`, { headers: FORGED });
      expect(JSON.parse(config.body).mcp_base_url).toBe(origin);
      // An authorization request the provider answers with a redirect: never towards the forged host.
      const authorize = await rawRequest(`${s.url}/oauth/authorize?response_type=code&client_id=nope`, { headers: FORGED });
      expect(`${authorize.headers.location ?? ''} ${authorize.body}`).not.toContain('evil.example');
      expect(s.publicBaseUrl).toBe(origin);
    } finally {
      await s.close();
    }
  });
});

describe('where the origin comes from', () => {
  it('unset, it is the URL the service listens on, port included (PORT=0, all interfaces: localhost)', async () => {
    const s = await startTestService(db.url, { HOST: '0.0.0.0' });
    try {
      expect(s.publicBaseUrl).toBe(`http://localhost:${s.port}`);
      const as = await getJson(`http://127.0.0.1:${s.port}/.well-known/oauth-authorization-server`);
      expect(as.body.issuer).toBe(`http://localhost:${s.port}`);
    } finally {
      await s.close();
    }
  });

  it('PUBLIC_BASE_URL and DASHBOARD_ORIGIN must be plain http(s) URLs (no query, fragment or credentials)', () => {
    for (const bad of ['https://mcp.example.com/?x=1', 'https://mcp.example.com/#a', 'https://u:p@mcp.example.com', 'ftp://mcp.example.com', 'mcp.example.com']) {
      expect(() => loadConfig({ PUBLIC_BASE_URL: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ DASHBOARD_ORIGIN: bad }), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://mcp.example.com/' }).publicBaseUrl).toBe('https://mcp.example.com');
  });
});
