// Stage 9 (DESIGN.md §3, "charged only for a successful tool result delivered"): a reservation
// is settled once its answer has been written to the socket, and refunded when the call fails or
// the client goes away first. The watch starts when the credits are reserved, so a client that
// disconnects while the tool runs is seen even though nothing is being written yet.
import type { ServerResponse } from 'node:http';
import type { CreditMeter } from '../metering/meter.ts';

export type Settlement = { kind: 'charged' } | { kind: 'refunded'; note: string; balance: number | null } | { kind: 'refund-deferred'; note: string };

export class Delivery {
  readonly #meter: CreditMeter;
  readonly #requestId: string;
  readonly #res: ServerResponse;
  readonly #controller = new AbortController();
  #resolved = false;
  readonly #onSettled: (s: Settlement) => void;

  constructor(meter: CreditMeter, requestId: string, res: ServerResponse, onSettled: (s: Settlement) => void) {
    this.#meter = meter;
    this.#requestId = requestId;
    this.#res = res;
    this.#onSettled = onSettled;
    // The client may have gone while the reservation was under way: its close event is past.
    if (res.destroyed || res.socket?.destroyed) queueMicrotask(this.#onClose);
    else res.once('close', this.#onClose);
  }

  /** Aborted when the client goes away before the answer is written. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The client is gone (its socket closed before the answer was written). */
  get lost(): boolean {
    return (this.#res.destroyed || this.#res.socket?.destroyed === true) && !this.#res.writableFinished;
  }

  /** The call failed: give the credits back now (idempotent with the close watch). */
  refund(note: string): Promise<Settlement> {
    if (this.#resolved) return Promise.resolve({ kind: 'refunded', note: 'already resolved', balance: null });
    this.#resolved = true;
    this.#res.removeListener('close', this.#onClose);
    return this.#meter.refund(this.#requestId, note).then(
      (balance): Settlement => this.#report({ kind: 'refunded', note, balance }),
      (): Settlement => this.#report({ kind: 'refund-deferred', note }),
    );
  }

  readonly #onClose = (): void => {
    if (this.#resolved) return;
    if (this.#res.writableFinished) {
      this.#resolved = true;
      this.#meter.settle(this.#requestId);
      this.#report({ kind: 'charged' });
      return;
    }
    this.#controller.abort();
    // The stale-reservation sweep refunds it if the database is unreachable now.
    void this.refund('client disconnected before the answer');
  };

  #report(s: Settlement): Settlement {
    this.#onSettled(s);
    return s;
  }
}
