// Stage 3 (DESIGN.md §3 row 3): the key's scope and the account's plan include this server, and
// the account is active.
import { ApiError } from '../errors.ts';
import type { KeyGrant } from '../keys/store.ts';
import type { Authorized, Routed } from './context.ts';

export function authorize(routed: Routed, grant: KeyGrant): Authorized {
  const server = routed.server.name;
  if (grant.key_servers && !grant.key_servers.includes(server)) {
    throw new ApiError('KEY_SCOPE_FORBIDDEN', undefined, { server, allowed_servers: grant.key_servers });
  }
  if (!grant.plan_servers.includes(server)) throw new ApiError('PLAN_FORBIDDEN', undefined, { server, plan: grant.plan });
  if (grant.account_status !== 'active') throw new ApiError('ACCOUNT_SUSPENDED');
  return { ...routed, grant };
}
