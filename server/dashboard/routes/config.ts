// GET /api/config: what the page needs before anyone signs in (the MCP address, the servers, the
// sign-in chains, WalletConnect, the request log's retention).
import type { FastifyInstance } from 'fastify';
import type { DashboardConfig } from '../../config.ts';
import type { Registry } from '../../mcp/registry.ts';
import type { PublicOrigins } from '../../origin.ts';
import { SIGN_IN_CHAINS } from '../verify.ts';

export function configRoutes(
  app: FastifyInstance,
  deps: { registry: Registry; origins: PublicOrigins; settings: Pick<DashboardConfig, 'walletConnectProjectId' | 'requestLogRetentionDays'> },
): void {
  const { settings } = deps;
  app.get('/config', async () => ({
    mcp_base_url: deps.origins.base,
    servers: [...deps.registry.values()].map((s) => ({ name: s.name, description: s.description })),
    chains: Object.entries(SIGN_IN_CHAINS).map(([id, network]) => ({ id: Number(id), network })),
    walletconnect_project_id: settings.walletConnectProjectId ?? null,
    request_log_retention_days: settings.requestLogRetentionDays,
  }));
}
