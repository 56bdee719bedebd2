// The whole connector path with the official v2 MCP client's own OAuth support: it meets a 401
// on /mcp/{server}, follows resource_metadata to the authorization server, registers (DCR, or a
// Client ID Metadata Document served from a plain-HTTP loopback host behind the development
// flag), sends the "user" to authorize; the user signs in with a wallet and approves; the client
// exchanges the code and calls a paid tool, charged to that wallet's account.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountIdByWallet } from '../../server/accounts/accounts.ts';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, startTestService } from '../helpers/service.ts';
import { SERVER_NAMES } from '../../server/mcp/names.ts';
import { approve, MemoryOAuthProvider, openConsent, REDIRECT_URL, startHost } from './helpers.ts';

const SERVER = 'market-intelligence';

let db: TestDatabase;
let service: RunningService;
let cimdHost: Awaited<ReturnType<typeof startHost>>;
let cimdFetches = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { OAUTH_CIMD_ALLOW_LOCALHOST: '1' });
  cimdHost = await startHost((req, res) => {
    cimdFetches += 1;
    const clientId = `https://127.0.0.1:${cimdHost.port}${req.url}`;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        client_id: clientId,
        client_name: 'Metadata Document Assistant',
        client_uri: 'https://cimd-assistant.example/',
        logo_uri: 'https://cimd-assistant.example/logo.png',
        redirect_uris: [REDIRECT_URL],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
});

afterAll(async () => {
  await cimdHost?.close();
  await service?.close();
  await db?.drop();
});

async function connectWith(provider: MemoryOAuthProvider, path = `/mcp/${SERVER}`, approved: string[] = [SERVER]): Promise<Client> {
  const url = new URL(`${service.url}${path}`);
  const first = new Client({ name: 'oauth-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl, 'the SDK sent the user to authorize').toBeDefined();

  const wallet = privateKeyToAccount(generatePrivateKey());
  const walk = await openConsent(service.url, provider.authorizationUrl!, wallet);
  expect(walk.details.servers).toEqual(expect.arrayContaining(approved));
  const callback = await approve(walk, approved);
  expect(callback.searchParams.get('iss'), 'RFC 9207: the authorization response names the issuer').toBe(service.url);
  await transport.finishAuth(callback.searchParams);

  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  (client as Client & { wallet?: string }).wallet = wallet.address.toLowerCase();
  return client;
}

async function paidCallCharges(client: Client & { wallet?: string }) {
  const accountId = await accountIdByWallet(db, 'ethereum', client.wallet!);
  expect(accountId, 'the wallet sign-in made an account').toBeDefined();
  const before = await balanceOf(db, accountId!);
  const result = await client.callTool({ name: 'bench_echo', arguments: { message: 'via oauth' } });
  expect(result.isError).toBeFalsy();
  const envelope = result.structuredContent as { success: boolean; metadata: { credits_used: number; remaining_credits: number } };
  expect(envelope.success).toBe(true);
  expect(envelope.metadata.credits_used).toBe(1);
  await expect.poll(() => balanceOf(db, accountId!), { timeout: 5000 }).toBe(before - 1);
  expect(envelope.metadata.remaining_credits).toBe(before - 1);
}

describe('the v2 SDK client connects through OAuth and its paid call is charged to the wallet that approved', () => {
  it('with Dynamic Client Registration', async () => {
    const provider = new MemoryOAuthProvider();
    const client = await connectWith(provider);
    expect(provider.client?.client_id, 'the client registered itself').toMatch(/^[A-Za-z0-9_-]+$/);
    expect(provider.saved?.refresh_token, 'a refresh token was issued').toBeTruthy();
    await paidCallCharges(client);
    await client.close();
  });

  it('with a Client ID Metadata Document from a local host (development flag)', async () => {
    const clientMetadataUrl = `https://127.0.0.1:${cimdHost.port}/oauth/client.json`;
    const provider = new MemoryOAuthProvider({ clientMetadataUrl });
    const fetchesBefore = cimdFetches;
    const client = await connectWith(provider);
    expect(provider.client?.client_id, 'the URL is the client_id, no registration').toBe(clientMetadataUrl);
    expect(cimdFetches).toBeGreaterThan(fetchesBefore);
    await paidCallCharges(client);
    await client.close();
  });
});

describe('one connector for every server: the all-in-one endpoint {base_url}/mcp', () => {
  it('one OAuth connection and one consent listing every server; the client sees the approved servers’ tools and its call is charged', async () => {
    const provider = new MemoryOAuthProvider();
    const approved = ['market-intelligence', 'kol-analytics'];
    const client = await connectWith(provider, '/mcp', approved);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_prices', 'rank_kols', 'get_capabilities']));
    // Servers the user did not approve are not offered, and calling one is refused.
    expect(names).not.toContain('forecast_price');
    await expect(client.callTool({ name: 'forecast_price', arguments: { asset: 'bitcoin', horizon: 7 } })).rejects.toThrow();
    await paidCallCharges(client);
    await client.close();
  });

  it('the consent for /mcp offers all nine servers', async () => {
    const provider = new MemoryOAuthProvider();
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedError);
    const walk = await openConsent(service.url, provider.authorizationUrl!, privateKeyToAccount(generatePrivateKey()));
    expect([...walk.details.servers].sort()).toEqual([...SERVER_NAMES].sort());
  });
});
