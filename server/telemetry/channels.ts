// Process-wide diagnostics channels that decouple the code doing the work (HTTP clients) from the
// metrics registry counting it: a publisher with no subscriber pays nothing, and several
// registries (one per service a test starts) can listen at once.
import diagnostics from 'node:diagnostics_channel';

export const UPSTREAM_CHANNEL = 'cryptomcp:upstream';

/** One attempt at an upstream provider. */
export interface UpstreamEvent {
  /** A name fixed in code ('live:coingecko', 'evm:ethereum'), never a URL: a bounded label. */
  provider: string;
  /** ok, timeout, rate_limited, not_found, error (any other failure) or aborted (by our caller). */
  outcome: 'ok' | 'timeout' | 'rate_limited' | 'not_found' | 'error' | 'aborted';
  seconds: number;
}

export const upstreamChannel = diagnostics.channel(UPSTREAM_CHANNEL);

export function publishUpstream(event: UpstreamEvent): void {
  if (upstreamChannel.hasSubscribers) upstreamChannel.publish(event);
}
