// Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection: only the
// holder reconciles. A candidate takes the lease when it is free or when its holder has not
// renewed it for leaseDuration *as observed on this replica's own clock* (so clock skew between
// nodes does not matter); every write carries the resourceVersion it read, so two candidates
// racing for the lease get one success and one 409. The holder renews every retryPeriod and
// steps down if it cannot renew within renewDeadline (two thirds of leaseDuration by default) —
// on a timer of its own, so a renewal that hangs cannot keep it leading: it stops before any
// other replica can see the lease expire. Every lease call is bounded by requestTimeout. On
// shutdown it releases the lease so a standby takes over at once instead of after leaseDuration.
import type { KubeClient } from './kube/client.ts';
import { statusOf } from './kube/client.ts';

export interface LeaderOptions {
  name: string;
  namespace: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Longest wait for one acquire-or-renew round (GET and PUT); half the renew deadline by default. */
  requestTimeoutMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: (line: string) => void;
  now?: () => number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: { holderIdentity?: string | null; leaseDurationSeconds?: number; acquireTime?: string | null; renewTime?: string | null; leaseTransitions?: number };
}

/** RFC 3339 with microseconds, as MicroTime fields are written. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

export class LeaseTimeoutError extends Error {}

/** Rejects after ms; the call itself is abandoned (a late answer is ignored). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LeaseTimeoutError(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export class LeaderElector {
  private timer: NodeJS.Timeout | undefined;
  /** Fires renewDeadline after the last successful renewal: stepping down needs no answer. */
  private deadline: NodeJS.Timeout | undefined;
  private leading = false;
  private lastRenew = 0;
  private observed: { record: string; at: number } | undefined;
  private stopped = false;
  /** The campaign round under way, so stop() can let it finish before releasing. */
  private inflight: Promise<void> = Promise.resolve();
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly requestTimeoutMs: number;
  private readonly now: () => number;

  private readonly client: KubeClient;
  private readonly opts: LeaderOptions;

  constructor(client: KubeClient, opts: LeaderOptions) {
    this.client = client;
    this.opts = opts;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? Math.round((opts.leaseDurationMs * 2) / 3);
    this.retryPeriodMs = opts.retryPeriodMs ?? Math.max(100, Math.round(opts.leaseDurationMs / 7.5));
    this.requestTimeoutMs = opts.requestTimeoutMs ?? Math.max(50, Math.round(this.renewDeadlineMs / 2));
    this.now = opts.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.inflight = this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    // A little jitter keeps standbys from hitting the API server in lockstep.
    this.timer = setTimeout(() => (this.inflight = this.tick()), Math.round(this.retryPeriodMs * (1 + 0.2 * Math.random())));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    const started = this.now();
    try {
      ok = await withTimeout(this.tryAcquireOrRenew(), this.requestTimeoutMs, `lease ${this.opts.namespace}/${this.opts.name}`);
    } catch (err) {
      this.opts.log?.(`lease ${this.opts.namespace}/${this.opts.name}: ${(err as Error).message}`);
    }
    if (this.stopped) return;
    if (ok) {
      // The renewal is as old as the round's start: the lease's renewTime is no later than that.
      this.lastRenew = started;
      this.armDeadline();
      if (!this.leading) {
        this.leading = true;
        this.opts.log?.(`${this.opts.identity} became leader`);
        this.opts.onStartedLeading();
      }
    } else if (this.leading && this.now() - this.lastRenew > this.renewDeadlineMs) {
      this.stepDown();
    }
    this.schedule();
  }

  private armDeadline(): void {
    clearTimeout(this.deadline);
    const left = this.lastRenew + this.renewDeadlineMs - this.now();
    this.deadline = setTimeout(() => {
      if (this.leading && !this.stopped) this.stepDown();
    }, Math.max(0, left));
    this.deadline.unref();
  }

  private stepDown(): void {
    clearTimeout(this.deadline);
    this.leading = false;
    this.opts.log?.(`${this.opts.identity} lost the lease (not renewed within ${this.renewDeadlineMs} ms)`);
    this.opts.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const durationS = Math.max(1, Math.round(this.opts.leaseDurationMs / 1000));
    const current = await this.client.get<Lease>('coordination.k8s.io/v1', 'Lease', this.opts.namespace, this.opts.name);
    if (!current) {
      try {
        await this.client.create<Lease>({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.opts.name, namespace: this.opts.namespace },
          spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: durationS, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        });
        return true;
      } catch (err) {
        if (statusOf(err) === 409) return false;
        throw err;
      }
    }
    const spec = current.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseTransitions]);
    if (this.observed?.record !== record) this.observed = { record, at: now };
    const holder = spec.holderIdentity ?? '';
    const mine = holder === this.opts.identity;
    const durationMs = (spec.leaseDurationSeconds ?? durationS) * 1000;
    const expired = holder === '' || this.observed.at + durationMs <= now;
    if (!mine && !expired) return false;
    const next: Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: durationS,
        renewTime: microTime(now),
        acquireTime: mine ? spec.acquireTime : microTime(now),
        leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      await this.client.replace(next);
      return true;
    } catch (err) {
      if (statusOf(err) === 409) return false;
      throw err;
    }
  }

  /** Stops campaigning; a leader hands the lease back so a standby can take it at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    // A renewal in flight would race the release (and win with a 409 for us): let it land.
    await this.inflight;
    if (!this.leading) return;
    this.leading = false;
    this.opts.onStoppedLeading();
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await withTimeout(
          (async () => {
            const current = await this.client.get<Lease>('coordination.k8s.io/v1', 'Lease', this.opts.namespace, this.opts.name);
            if (current?.spec?.holderIdentity !== this.opts.identity) return;
            await this.client.replace<Lease>({ ...current, spec: { ...current.spec, holderIdentity: null, acquireTime: null, renewTime: null, leaseDurationSeconds: 1 } });
          })(),
          this.requestTimeoutMs,
          'lease release',
        );
        return;
      } catch (err) {
        if (statusOf(err) === 409) continue;
        this.opts.log?.(`lease release failed: ${(err as Error).message}`);
        return;
      }
    }
  }
}
