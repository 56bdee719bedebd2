// A tool that spans chains answers for the chains that work and lists the others: what one
// failed chain looks like in `unavailable` (its error code and the provider that failed).
import { ApiError } from '../../errors.ts';

export interface ChainFailure {
  code: string;
  provider: string;
}

export function failureOf(err: unknown, chain: string): ChainFailure {
  const e = err instanceof ApiError ? err : undefined;
  const provider = (e?.details as { provider?: unknown } | undefined)?.provider;
  return { code: e?.code ?? 'UPSTREAM_ERROR', provider: typeof provider === 'string' ? provider : chain };
}
