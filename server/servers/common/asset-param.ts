// An asset named in a rule's arguments: resolved now, so an unknown one is refused as a bad
// argument (400 INVALID_PARAMS naming `asset`, with close matches) and no rule is created.
import { ApiError } from '../../errors.ts';
import type { AssetEntry, AssetRegistry } from '../../providers/market/types.ts';
import { resolveAsset } from './assets.ts';

export function assetArgument(registry: AssetRegistry, query: string): AssetEntry {
  try {
    return resolveAsset(registry, query);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'NOT_FOUND') throw err;
    throw new ApiError('INVALID_PARAMS', err.message, { issues: [{ path: 'asset', message: err.message }], close_matches: err.details.close_matches });
  }
}
