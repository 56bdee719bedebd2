// The delivery policy (DESIGN.md §3 stage 9, "charged only for an answer delivered"), one module
// for every paid path: /mcp/{server}, the all-in-one /mcp and /x402/mcp/{server}. Each path
// takes a payment before the tool runs (a credit reservation, or a verified x402 authorization)
// and hands this module two verbs for it, capture and release. The rule:
//
//   - the client is gone before the answer exists  → released (refunded / never settled),
//     whether the tool was waiting on the network or on the CPU;
//   - the call fails, or its answer holds no data   → released;
//   - the answer exists and the client is still there → captured, then handed to the socket.
//     A captured answer stays charged even if the client stops reading: the write timeout cuts
//     such a client off instead of letting it hold the answer (and the connection) for ever.
//
// Capture happens before the first byte is written, so a reservation with a produced answer is
// queued for settlement at once and the stale-reservation sweep (which runs far later, see
// runtime.ts) only ever meets reservations whose answer was never produced.
import type { ServerResponse } from 'node:http';
import type { ToolOutput } from '../mcp/tool.ts';
import type { CreditMeter } from '../metering/meter.ts';

/** What an answer is charged, of a tool costing `cost`, and why when it is less. */
export interface Charge {
  credits: number;
  /** Why less than the cost was charged (a line for the answer's notes and the ledger). */
  note?: string;
}

/**
 * The one pricing rule of an answer (DESIGN.md §10), for every tool and every paid path:
 *   - an answer with no data for what was asked costs nothing: the tool says `empty`, or its
 *     page holds no items;
 *   - a page cut for size is charged for what it holds: the tool's cost buys `limit` items, so the
 *     items [offset, offset + held) cost ⌈cost·(offset+held)/limit⌉ − ⌈cost·offset/limit⌉ (at
 *     least 1): following the cursors through cut pages costs what full pages of the same items
 *     would, never more, instead of the full cost per page;
 *   - anything else costs the tool's cost.
 */
export function creditsFor(cost: number, output: Pick<ToolOutput, 'empty' | 'page'>): Charge {
  const page = output.page;
  if (output.empty === true || page?.held === 0) return { credits: 0, note: 'The answer holds no data for what was asked: it is free.' };
  if (page === undefined || !page.cut || cost === 0) return { credits: cost };
  const upTo = (items: number) => Math.ceil((cost * items) / page.limit - 1e-9);
  const credits = Math.min(cost, Math.max(1, upTo(page.offset + page.held) - upTo(page.offset)));
  if (credits >= cost) return { credits: cost };
  return {
    credits,
    note: `This page was cut to fit the answer's size: it holds ${page.held} of the ${page.limit} items asked for and is charged ${credits} of ${cost} credits.`,
  };
}

/** What a paid path took before the tool ran, and how to make it final or give it back. */
export interface Payment {
  /**
   * The answer is about to be written: take the payment for good, or only `part` of it (a page
   * cut for size; the rest is given back). Throwing withholds the answer.
   */
  capture(part?: Required<Charge>): unknown;
  /** Gives the payment back (idempotent). Resolves to the balance after, null if nothing was due; rejects: deferred to the sweep. */
  release(note: string): Promise<number | null>;
}

/** The outcome label of a call whose client left before its answer existed (HTTP 499, as nginx logs it). */
export const CLIENT_GONE = 'CLIENT_GONE';

export type Settlement = { kind: 'charged'; /** Less than the cost: a cut page's part. */ credits?: number } | { kind: 'refunded'; note: string; balance: number | null } | { kind: 'refund-deferred'; note: string };

export interface DeliveryOptions {
  /** Longest time from handing an answer to the socket to its last byte leaving; then the socket is cut. */
  writeTimeoutMs: number;
  /** Told once, when the payment is captured or released. */
  onSettled?: (s: Settlement) => void;
}

/**
 * Two passes through the event loop: the first may begin in the check phase we are already in, so
 * only the second is sure to follow a poll phase, where a close that arrived while the CPU was
 * busy is read (measured: the close is seen on the second pass, never the first).
 */
async function ioTurns(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class Delivery {
  readonly #res: ServerResponse;
  readonly #payment: Payment;
  readonly #opts: DeliveryOptions;
  readonly #controller = new AbortController();
  #state: 'pending' | 'captured' | 'released' = 'pending';

  constructor(res: ServerResponse, payment: Payment, opts: DeliveryOptions) {
    this.#res = res;
    this.#payment = payment;
    this.#opts = opts;
    // The client may have gone while the payment was being taken: its close event is past.
    if (this.#socketGone()) queueMicrotask(this.#onClose);
    else res.once('close', this.#onClose);
  }

  /** Aborted when the client goes away before the answer exists (the tool's signal follows it). */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Nobody is left to take the answer. */
  get gone(): boolean {
    return this.#controller.signal.aborted || this.#socketGone();
  }

  /** The call failed or its answer is free: give the payment back now (idempotent). */
  release(note: string): Promise<Settlement> {
    if (this.#state !== 'pending') return Promise.resolve({ kind: 'refunded', note: 'already resolved', balance: null });
    this.#state = 'released';
    this.#res.removeListener('close', this.#onClose);
    return this.#payment.release(note).then(
      (balance): Settlement => this.#report({ kind: 'refunded', note, balance }),
      (): Settlement => this.#report({ kind: 'refund-deferred', note }),
    );
  }

  /**
   * The answer exists. Returns false when nobody is there to take it (the payment is released and
   * nothing should be written); otherwise the payment is captured (unless already released as a
   * free answer) and the caller writes the answer at once. A capture that throws is the caller's
   * error to answer with; nothing was taken.
   */
  async handOver(part?: Required<Charge>): Promise<boolean> {
    // A tool that held the CPU kept the loop from seeing its client leave: look once more.
    await ioTurns();
    if (this.gone) {
      this.#controller.abort();
      await this.release('client disconnected before the answer');
      return false;
    }
    if (this.#state === 'pending') {
      this.#state = 'captured';
      this.#res.removeListener('close', this.#onClose);
      try {
        await this.#payment.capture(part);
      } catch (err) {
        this.#state = 'released';
        throw err;
      }
      this.#report(part === undefined ? { kind: 'charged' } : { kind: 'charged', credits: part.credits });
    }
    this.#armWriteTimeout();
    return true;
  }

  #armWriteTimeout(): void {
    const res = this.#res;
    const timer = setTimeout(() => {
      if (!res.writableFinished) res.destroy();
    }, this.#opts.writeTimeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
  }

  #socketGone(): boolean {
    return (this.#res.destroyed || this.#res.socket?.destroyed === true) && !this.#res.writableFinished;
  }

  readonly #onClose = (): void => {
    if (this.#state !== 'pending') return;
    this.#controller.abort();
    // Refund now; if the database is unreachable the stale-reservation sweep refunds it later.
    void this.release('client disconnected before the answer');
  };

  #report(s: Settlement): Settlement {
    this.#opts.onSettled?.(s);
    return s;
  }
}

/** The credit reservation of a keyed call as a Payment: settled in the next batch (a part at once), refunded at once. */
export function reservationPayment(meter: Pick<CreditMeter, 'settle' | 'settlePart' | 'refund'>, requestId: string): Payment {
  return {
    capture: (part) => (part === undefined ? meter.settle(requestId) : meter.settlePart(requestId, part.credits, part.note)),
    release: (note) => meter.refund(requestId, note),
  };
}
