// Stage 3 (DESIGN.md §3 row 3): the key's scope and the account's plan include this server, and
// the account is active.
import { ApiError } from '../errors.ts';
import type { KeyGrant } from '../keys/store.ts';
import type { AllInOne } from '../mcp/registry.ts';
import type { ServerName } from '../mcp/names.ts';
import type { Authorized, Classified, Routed } from './context.ts';

export function authorize(routed: Routed, grant: KeyGrant): Authorized {
  const refused = serverRefusal(routed.server.name, grant);
  if (refused) throw refused;
  if (grant.account_status !== 'active') throw new ApiError('ACCOUNT_SUSPENDED');
  return { ...routed, grant };
}

/** Why the grant may not use `server` (its key's scope, then its plan), or undefined. */
function serverRefusal(server: string, grant: KeyGrant): ApiError | undefined {
  if (grant.key_servers && !grant.key_servers.includes(server)) {
    return new ApiError('KEY_SCOPE_FORBIDDEN', undefined, { server, allowed_servers: grant.key_servers });
  }
  if (!grant.plan_servers.includes(server)) return new ApiError('PLAN_FORBIDDEN', undefined, { server, plan: grant.plan });
  return undefined;
}

/** The servers a grant may use: its key's scope (if any) within its plan's servers. */
export function permittedServers(grant: KeyGrant, hosted: readonly ServerName[]): ServerName[] {
  return hosted.filter((s) => grant.plan_servers.includes(s) && (!grant.key_servers || grant.key_servers.includes(s)));
}

/**
 * The all-in-one endpoint's row 3: the grant may use at least one hosted server (the view lists
 * exactly those), and the account is active. A tool of a server outside the grant is refused
 * per call (toolOutsideGrant), with the same codes as the server's own URL would give.
 */
export function authorizeAll(requestId: string, grant: KeyGrant, allInOne: AllInOne): Authorized {
  const permitted = permittedServers(grant, allInOne.servers);
  if (permitted.length === 0) {
    if (grant.key_servers) throw new ApiError('KEY_SCOPE_FORBIDDEN', undefined, { server: 'all', allowed_servers: grant.key_servers });
    throw new ApiError('PLAN_FORBIDDEN', undefined, { server: 'all', plan: grant.plan });
  }
  if (grant.account_status !== 'active') throw new ApiError('ACCOUNT_SUSPENDED');
  return { requestId, server: allInOne.view(permitted), grant };
}

/** On the all-in-one endpoint, a tools/call of a server the grant may not use: 403 as that server's URL answers it. */
export function toolOutsideGrant(authorized: Authorized, allInOne: AllInOne, body: unknown): ApiError | undefined {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  const name = message.params.name;
  if (authorized.server.tools.has(name)) return undefined;
  const home = allInOne.homeOf(name);
  return home ? serverRefusal(home, authorized.grant) : undefined;
}

/** A read-only key calling a tool that writes (alert rules, watches): 403, before anything is reserved. */
export function writeOutsideGrant(call: Classified): ApiError | undefined {
  if (call.call.kind !== 'tools/call' || !call.grant.read_only) return undefined;
  if (call.call.tool.definition.annotations?.readOnlyHint !== false) return undefined;
  return new ApiError('KEY_SCOPE_FORBIDDEN', 'This API key is read-only: it cannot call tools that change anything.', {
    server: call.call.tool.server,
    tool: call.call.tool.name,
    scope: 'read_only',
  });
}
