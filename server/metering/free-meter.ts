// A meter that admits every call and charges nothing: the benchmarks' "metering bypassed"
// configuration (CRYPTOMCP_BENCH_UNMETERED). The gateway runs its whole billing path against it,
// so the comparison with the real meter measures the database statement and nothing else.
import type { CreditMeter, MeterDecision, ReserveInput } from './meter.ts';

export class FreeMeter implements CreditMeter {
  reserve(_input: ReserveInput): Promise<MeterDecision> {
    return Promise.resolve({
      outcome: 'ok',
      balance: 0,
      plan: 'unmetered',
      requestsPerMinute: 0,
      burst: 0,
      rateRemaining: 0,
      rateResetSeconds: 0,
      retryAfterSeconds: 0,
    });
  }

  refund(_requestId: string, _note: string): Promise<number | null> {
    return Promise.resolve(null);
  }

  settle(_requestId: string): void {}

  settlePart(_requestId: string, _credits: number, _note: string): Promise<number | null> {
    return Promise.resolve(null);
  }
}
