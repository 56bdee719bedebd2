// One MCP server of the real service, with an account able to afford many calls and the SDK
// client connected to it: the setup of every tool suite.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RunningService } from '../../server/runtime.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createAccountWithKey, createUnlimitedPlan, mcpClient, startTestService } from './service.ts';

export type Envelope<T> = {
  success: true;
  data: T;
  metadata: { request_id: string; source: string; data_as_of: string | null; credits_used: number; next_cursor?: string };
};

export interface ToolSuite {
  db: TestDatabase;
  svc: RunningService;
  client: Client;
  key: string;
  accountId: string;
  call<T>(name: string, args: Record<string, unknown>): Promise<Envelope<T>>;
  close(): Promise<void>;
}

export async function toolSuite(server: string, credits = 10_000, env: Record<string, string> = {}): Promise<ToolSuite> {
  const db = await createTestDatabase();
  const plan = `suite-${server}`.slice(0, 32);
  await createUnlimitedPlan(db, plan, credits);
  const svc = await startTestService(db.url, env);
  const { key, account } = await createAccountWithKey(db, { plan });
  const client = await mcpClient(svc.url, server, key);
  return {
    db,
    svc,
    client,
    key,
    accountId: account.id,
    call: async <T>(name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })).structuredContent as Envelope<T>,
    async close() {
      await client.close();
      await svc.close();
      await db.drop();
    },
  };
}
