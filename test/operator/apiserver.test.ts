// The stand-in API server is strict where the operator could otherwise lean on leniency: field
// managers and server-side-apply conflicts, status validated (and pruned) against the CRD
// schema, paginated lists, RBAC. These check the stand-in itself, over HTTP, as the operator's
// client and kubectl reach it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, type ResourceType } from '../../operator/kube/client.ts';
import { StandInApiServer } from './support/apiserver.ts';
import { kubeConfigFor } from './support/harness.ts';

const NS = 'strict';
let api: StandInApiServer;

async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${api.url}${path}`, { method, headers: body === undefined ? {} : { 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const deployment = (image: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } } } });
const applyPath = (manager: string, force = false) => `/apis/apps/v1/namespaces/${NS}/deployments/web?fieldManager=${manager}${force ? '&force=true' : ''}`;

beforeAll(async () => {
  api = new StandInApiServer();
  await api.start();
});

afterAll(async () => {
  await api?.stop();
});

describe('server-side apply with more than one field manager', () => {
  it('records each manager in metadata.managedFields', async () => {
    const created = await call('PATCH', applyPath('team-a'), deployment('a:1'), 'application/apply-patch+yaml');
    expect(created.status).toBe(200);
    const managed = (created.json.metadata as { managedFields: { manager: string; operation: string; fieldsV1: Record<string, unknown> }[] }).managedFields;
    expect(managed).toEqual([expect.objectContaining({ manager: 'team-a', operation: 'Apply', fieldsV1: expect.objectContaining({ 'f:spec': expect.objectContaining({ 'f:replicas': {} }) }) })]);
  });

  it('an apply without force that changes a field another manager owns answers 409 naming it; with force it takes the field', async () => {
    const conflict = await call('PATCH', applyPath('team-b'), deployment('b:1'), 'application/apply-patch+yaml');
    expect(conflict.status).toBe(409);
    expect(conflict.json.message).toMatch(/Apply failed with 1 conflict: conflict with "team-a": \.spec\.template\.spec\.containers/);
    // Sending the same value is no conflict (shared ownership).
    expect((await call('PATCH', applyPath('team-b'), deployment('a:1'), 'application/apply-patch+yaml')).status).toBe(200);
    const forced = await call('PATCH', applyPath('team-b', true), deployment('b:1'), 'application/apply-patch+yaml');
    expect(forced.status).toBe(200);
    const managers = (forced.json.metadata as { managedFields: { manager: string; fieldsV1: { 'f:spec'?: Record<string, unknown> } }[] }).managedFields;
    const a = managers.find((m) => m.manager === 'team-a');
    expect(JSON.stringify(a?.fieldsV1 ?? {})).not.toContain('f:containers');
  });

  it('a merge patch (an update) takes ownership of what it changed', async () => {
    const patched = await call('PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/web?fieldManager=kubectl-patch`, { spec: { replicas: 3 } }, 'application/merge-patch+json');
    expect((patched.json.metadata as { managedFields: { manager: string; operation: string }[] }).managedFields).toContainEqual(expect.objectContaining({ manager: 'kubectl-patch', operation: 'Update' }));
    expect((await call('PATCH', applyPath('team-a'), { ...deployment('b:1'), spec: { ...deployment('b:1').spec, replicas: 1 } }, 'application/apply-patch+yaml')).status).toBe(409);
  });
});

describe('status against the CRD schema', () => {
  beforeAll(() => {
    api.create({ apiVersion: 'cryptomcp.dev/v1alpha1', kind: 'MCPServer', metadata: { name: 'kol', namespace: NS }, spec: { server: 'kol-analytics', database: { secretRef: { name: 'db' } } } } as never);
  });

  it('an invalid status (a condition without its required fields, a status outside the enum) is 422', async () => {
    const bad = await call('PATCH', `/apis/cryptomcp.dev/v1alpha1/namespaces/${NS}/mcpservers/kol/status`, { status: { conditions: [{ type: 'Ready', status: 'Maybe' }] } }, 'application/merge-patch+json');
    expect(bad.status).toBe(422);
    expect(bad.json.message).toMatch(/status\/conditions\/0/);
  });

  it('fields the schema does not declare are pruned, as for a structural schema', async () => {
    const ok = await call('PATCH', `/apis/cryptomcp.dev/v1alpha1/namespaces/${NS}/mcpservers/kol/status`, { status: { replicas: 2, invented: true } }, 'application/merge-patch+json');
    expect(ok.status).toBe(200);
    expect(ok.json.status).toEqual({ replicas: 2 });
  });
});

describe('pagination', () => {
  it('limit answers a continue token; the pages together are the whole list; a token older than the history is 410', async () => {
    for (let i = 0; i < 7; i++) api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}`, namespace: 'paged' }, data: {} });
    const first = await call('GET', '/api/v1/namespaces/paged/secrets?limit=3');
    const meta = first.json.metadata as { continue?: string; remainingItemCount?: number };
    expect((first.json.items as unknown[]).length).toBe(3);
    expect(meta.remainingItemCount).toBe(4);
    const second = await call('GET', `/api/v1/namespaces/paged/secrets?limit=3&continue=${meta.continue}`);
    expect((second.json.items as { metadata: { name: string } }[]).map((s) => s.metadata.name)).toEqual(['s3', 's4', 's5']);
    api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'later', namespace: 'paged' }, data: {} });
    api.compact();
    expect((await call('GET', `/api/v1/namespaces/paged/secrets?limit=3&continue=${meta.continue}`)).status).toBe(410);
  });

  it("the operator's client pages through a long list (500 a page) and gets every item", async () => {
    for (let i = 0; i < 1203; i++) api.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'many' }, spec: {} });
    const before = api.requests.length;
    const services: ResourceType = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true };
    const { items } = await new KubeClient(kubeConfigFor(api)).list(services, 'many');
    expect(items).toHaveLength(1203);
    expect(new Set(items.map((s) => s.metadata?.name)).size).toBe(1203);
    expect(api.requests.slice(before).filter((r) => r === 'GET /api/v1/namespaces/many/services')).toHaveLength(3);
  });
});

describe('RBAC', () => {
  it('a token the server never issued is 401; a ServiceAccount no binding names is 403 for everything but discovery', async () => {
    api.enforceRbac([]);
    const res = await fetch(`${api.url}/api/v1/namespaces/${NS}/secrets`, { headers: { authorization: 'Bearer made-up' } });
    expect(res.status).toBe(401);
    const token = api.tokenFor(`${NS}:nobody`);
    const denied = await fetch(`${api.url}/api/v1/namespaces/${NS}/secrets`, { headers: { authorization: `Bearer ${token}` } });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { message: string }).message).toBe(`secrets is forbidden: User "system:serviceaccount:${NS}:nobody" cannot list resource "secrets" in API group "" in the namespace "${NS}"`);
    expect((await fetch(`${api.url}/apis`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});
