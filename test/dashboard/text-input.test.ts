// Text the dashboard API stores comes in clean or not at all: a NUL anywhere in a body, a query or
// a path is 400 INVALID_PARAMS naming the field (PostgreSQL text cannot hold one, so it used to be
// a 500), and a key's name and description refuse control characters. Nothing is stored, nothing
// is remembered under an Idempotency-Key, and the account's credits do not move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { balanceOf, ledgerSum, startTestService } from '../helpers/service.ts';
import { signedInNewAccount } from './helpers.ts';

let db: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await startTestService(db.url, { MCP_SERVERS: 'market-intelligence' });
});

afterAll(async () => {
  await service?.close();
  await db?.drop();
});

type Answer = { status: number; body: { error?: { code: string; details: { issues: { path: string }[] } } } };
const refused = (res: Answer, path: string) => {
  expect(res.status).toBe(400);
  expect(res.body.error?.code).toBe('INVALID_PARAMS');
  expect(res.body.error?.details.issues.map((i) => i.path)).toEqual([path]);
};

async function keysOf(accountId: string): Promise<{ name: string; description: string | null }[]> {
  return (await db.query<{ name: string; description: string | null }>('SELECT name, description FROM api_keys WHERE account_id = $1 ORDER BY created_at', [accountId])).rows;
}

describe('text the dashboard stores', () => {
  it('a NUL in a key name or description is 400 INVALID_PARAMS naming it, on create (with or without an Idempotency-Key) and on edit; nothing is stored or charged', async () => {
    const { client, accountId } = await signedIn();
    const balance = await balanceOf(db, accountId);

    refused(await client.post('/api/keys', { name: 'a\u0000b' }), 'name');
    refused(await client.post('/api/keys', { name: 'ok', description: 'x\u0000' }), 'description');
    refused(await client.post('/api/keys', { name: 'ok', servers: ['market-intelligence\u0000'] }), 'servers.0');
    refused(await client.post('/api/keys', { name: 'a\u0000b' }, { 'idempotency-key': 'nul-key-1' }), 'name');
    expect(await keysOf(accountId)).toEqual([]);
    const remembered = await db.query('SELECT 1 FROM dashboard_idempotency WHERE account_id = $1', [accountId]);
    expect(remembered.rowCount).toBe(0);

    const { body } = await client.post('/api/keys', { name: 'kept', description: 'first' });
    refused(await client.request('PATCH', `/api/keys/${body.key.id}`, { name: '\u0000' }), 'name');
    refused(await client.request('PATCH', `/api/keys/${body.key.id}`, { description: 'a\u0000' }), 'description');
    expect(await keysOf(accountId)).toEqual([{ name: 'kept', description: 'first' }]);

    expect(await balanceOf(db, accountId)).toBe(balance);
    expect(await ledgerSum(db, accountId)).toBe(balance);
  });

  it('a key name refuses every control character and a description all but tab and line breaks', async () => {
    const { client, accountId } = await signedIn();
    refused(await client.post('/api/keys', { name: 'red\u001b[31m' }), 'name');
    refused(await client.post('/api/keys', { name: 'two\nlines' }), 'name');
    refused(await client.post('/api/keys', { name: 'ok', description: 'bell\u0007' }), 'description');
    refused(await client.post('/api/keys', { name: 'ok', description: 'csi\u009b' }), 'description');
    expect(await keysOf(accountId)).toEqual([]);
    const made = await client.post('/api/keys', { name: 'fine', description: 'line one\n\tline two' });
    expect(made.status).toBe(201);
    refused(await client.request('PATCH', `/api/keys/${made.body.key.id}`, { name: 'tab\there' }), 'name');
    expect(await keysOf(accountId)).toEqual([{ name: 'fine', description: 'line one\n\tline two' }]);
  });

  it('a NUL in a query or a path is 400 INVALID_PARAMS too, not a failed query', async () => {
    const { client } = await signedIn();
    refused(await client.get('/api/requests?server=%00'), 'server');
    refused(await client.get('/api/requests?tool=get%00prices'), 'tool');
    refused(await client.post('/api/keys/%00/revoke'), 'id');
  });
});

const signedIn = () => signedInNewAccount(service.url);
