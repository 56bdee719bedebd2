// Stage 1 (DESIGN.md §3 row 1): the path names one of the hosted servers.
import { ApiError } from '../errors.ts';
import type { Registry } from '../mcp/registry.ts';
import type { ServerName } from '../mcp/names.ts';
import type { Routed } from './context.ts';

export function route(registry: Registry, requestId: string, serverParam: string): Routed {
  const server = registry.get(serverParam as ServerName);
  if (!server) throw new ApiError('SERVER_NOT_FOUND', undefined, { server: serverParam, available: [...registry.keys()] });
  return { requestId, server };
}
