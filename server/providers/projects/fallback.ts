// Live DefiLlama first, the offline data when it fails with a ProviderError, saying so in every
// source label.
import { ProviderError } from '../../errors.ts';
import type { ChainTvl, ProjectSource, Protocol, ProtocolList, TvlHistory } from './types.ts';

/**
 * Live first, the offline data when live fails with a ProviderError; answers from the fallback carry
 * "snapshot:… (fallback: live:defillama <kind>)" as their source. A caller's abort propagates.
 */
export class FallbackProjectSource implements ProjectSource {
  readonly name: string;
  readonly #live: ProjectSource;
  readonly #offline: ProjectSource;

  constructor(live: ProjectSource, offline: ProjectSource) {
    this.#live = live;
    this.#offline = offline;
    this.name = live.name;
  }

  async #attempt<T extends { source: string }>(live: () => Promise<T>, offline: () => Promise<T>): Promise<T> {
    try {
      return await live();
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      const answer = await offline();
      return { ...answer, source: `${answer.source} (fallback: ${err.provider} ${err.kind})` };
    }
  }

  protocols(signal?: AbortSignal): Promise<ProtocolList> {
    return this.#attempt(() => this.#live.protocols(signal), () => this.#offline.protocols(signal));
  }

  chains(signal?: AbortSignal): Promise<{ chains: ChainTvl[]; source: string }> {
    return this.#attempt(() => this.#live.chains(signal), () => this.#offline.chains(signal));
  }

  async protocolTvl(protocol: Protocol, signal?: AbortSignal): Promise<TvlHistory | undefined> {
    return this.#history(
      () => this.#live.protocolTvl(protocol, signal),
      () => this.#offline.protocolTvl(protocol, signal),
    );
  }

  async chainTvl(chain: string, signal?: AbortSignal): Promise<TvlHistory | undefined> {
    return this.#history(
      () => this.#live.chainTvl(chain, signal),
      () => this.#offline.chainTvl(chain, signal),
    );
  }

  async #history(live: () => Promise<TvlHistory | undefined>, offline: () => Promise<TvlHistory | undefined>): Promise<TvlHistory | undefined> {
    const wrapped = await this.#attempt(
      async () => ({ h: await live(), source: '' }),
      async () => ({ h: await offline(), source: '' }),
    );
    // A fallback answer's label lands on the wrapper; move it onto the history.
    return wrapped.h && wrapped.source ? { ...wrapped.h, source: `${wrapped.h.source}${wrapped.source}` } : wrapped.h;
  }
}
