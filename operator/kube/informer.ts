// The operator's own list-and-watch loop for one kind (in one namespace, or all): list to fill
// the cache and learn a resourceVersion, then watch from it with bookmarks, and
//   - on 410 Gone (version compacted away): relist, reconciling the cache with what is there;
//   - on a stream that ends or fails: watch again from the last version seen, with jittered
//     backoff after failures;
//   - on a stream that delivers nothing, not even a bookmark, for idleMs: the watchdog aborts it
//     and watches again (a half-open connection would otherwise hang the operator silently);
//   - every resyncMs: hands every cached key to the handler again (level-based safety net).
// Each change reaches `onChange` with the object's key; the handler only enqueues.
// Restarts are reported (onRestart, the watch-restart metric) only when abnormal: a 410, an
// error, a stream that closed within a second without a single line, the watchdog. The normal recycling is not:
// client-node's Watch ends every stream that is quiet for 30 s (the API server's bookmarks come
// about once a minute), and the API server ends watches at their timeout; both continue at once
// from the last version, and counting them would make a healthy operator's metric tick twice a
// minute per watch.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatchRestartReason } from '../metrics.ts';
import { statusOf, type KubeClient, type ResourceType, type WatchEvent } from './client.ts';

export interface InformerOptions {
  /** Only objects with these labels (a=b,c=d), for list and watch alike. */
  labelSelector?: string;
  resyncMs: number;
  idleMs: number;
  /** First delay after a failed list or watch; doubles up to maxBackoffMs, with jitter. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** obj is undefined once deleted; previous is what the cache held before (undefined when new). */
  onChange: (key: string, obj: KubernetesObject | undefined, previous: KubernetesObject | undefined) => void;
  onRestart?: (reason: WatchRestartReason) => void;
  log?: (line: string) => void;
}

/** A stream that ends cleanly sooner than this without a line was refused, not recycled. */
const MIN_NORMAL_WATCH_MS = 1000;

export function keyOf(obj: KubernetesObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name}` : String(obj.metadata?.name);
}

export class Informer<T extends KubernetesObject = KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private resourceVersion = '';
  private abortWatch: (() => void) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  /** Increments per watch opened, so events of an aborted stream are ignored. */
  private generation = 0;
  private syncedResolve!: () => void;
  /** Resolves after the first successful list. */
  readonly synced: Promise<void> = new Promise((resolve) => (this.syncedResolve = resolve));
  hasSynced = false;

  private readonly client: KubeClient;
  readonly type: ResourceType;
  private readonly namespace: string | undefined;
  private readonly opts: InformerOptions;

  constructor(client: KubeClient, type: ResourceType, namespace: string | undefined, opts: InformerOptions) {
    this.client = client;
    this.type = type;
    this.namespace = namespace;
    this.opts = opts;
  }

  /** "Kind" or "Kind in namespace", for logs and /readyz. */
  get description(): string {
    return this.namespace ? `${this.type.kind} in ${this.namespace}` : this.type.kind;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  start(): void {
    void this.relist();
    this.resyncTimer = setInterval(() => {
      for (const [key, obj] of this.cache) this.opts.onChange(key, obj, obj);
    }, this.opts.resyncMs);
    this.resyncTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.retryTimer);
    this.generation += 1;
    this.abortWatch?.();
  }

  private backoff(): number {
    const base = this.opts.backoffMs ?? 250;
    const delay = Math.min(this.opts.maxBackoffMs ?? 30_000, base * 2 ** this.failures);
    this.failures += 1;
    return Math.round(delay * (0.5 + Math.random()));
  }

  private retry(fn: () => Promise<void>): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void fn(), this.backoff());
    this.retryTimer.unref();
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    let res: { items: T[]; resourceVersion: string };
    try {
      res = await this.client.list<T>(this.type, this.namespace, this.opts.labelSelector);
    } catch (err) {
      this.opts.log?.(`list ${this.type.kind} failed: ${(err as Error).message}`);
      this.retry(() => this.relist());
      return;
    }
    if (this.stopped) return;
    const seen = new Set<string>();
    for (const obj of res.items) {
      const key = keyOf(obj);
      seen.add(key);
      const old = this.cache.get(key);
      this.cache.set(key, obj);
      if (!old || old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.opts.onChange(key, obj, old);
    }
    // Deletions missed while the watch was down (e.g. across a 410) show up as absences.
    for (const key of [...this.cache.keys()]) {
      if (!seen.has(key)) {
        const old = this.cache.get(key);
        this.cache.delete(key);
        this.opts.onChange(key, undefined, old);
      }
    }
    this.resourceVersion = res.resourceVersion;
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.syncedResolve();
    }
    await this.watch();
  }

  private armWatchdog(gen: number): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (gen !== this.generation || this.stopped) return;
      this.opts.log?.(`watch ${this.type.kind} idle for ${this.opts.idleMs} ms; restarting`);
      this.opts.onRestart?.('idle');
      this.generation += 1;
      this.abortWatch?.();
      void this.watch();
    }, this.opts.idleMs);
    this.idleTimer.unref();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    const gen = ++this.generation;
    let expired = false;
    let delivered = false;
    const opened = Date.now();
    const onEvent = (ev: WatchEvent) => {
      if (gen !== this.generation) return;
      delivered = true;
      this.armWatchdog(gen);
      this.failures = 0;
      if (ev.type === 'ERROR') {
        if (ev.object.code === 410) expired = true;
        return;
      }
      const rv = ev.object.metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      if (ev.type === 'BOOKMARK') return;
      const key = keyOf(ev.object);
      const old = this.cache.get(key);
      if (ev.type === 'DELETED') {
        this.cache.delete(key);
        this.opts.onChange(key, undefined, old ?? ev.object);
      } else {
        this.cache.set(key, ev.object as T);
        this.opts.onChange(key, ev.object as T, old);
      }
    };
    const onDone = (err: unknown) => {
      if (gen !== this.generation || this.stopped) return;
      this.generation += 1;
      clearTimeout(this.idleTimer);
      if (expired || statusOf(err) === 410) {
        this.opts.onRestart?.('expired');
        void this.relist();
      } else if ((err as { name?: string } | null)?.name === 'TimeoutError') {
        // client-node's own inactivity timeout (30 s without a byte): the normal recycling of a
        // quiet stream (a half-open one ends the same way). Continue from the last version.
        void this.watch();
      } else if (err) {
        this.opts.onRestart?.('error');
        this.retry(() => this.watch());
      } else if (delivered || Date.now() - opened >= MIN_NORMAL_WATCH_MS) {
        // A normal end (the server's watch timeout, a load balancer): continue at once.
        void this.watch();
      } else {
        // Closed at once without a single line: something in between refuses the stream; back off.
        this.opts.onRestart?.('closed');
        this.retry(() => this.watch());
      }
    };
    try {
      this.armWatchdog(gen);
      const abort = await this.client.watch(this.type, this.namespace, this.resourceVersion, onEvent, onDone, this.opts.labelSelector);
      if (gen === this.generation) this.abortWatch = abort;
      else abort();
    } catch (err) {
      onDone(err);
    }
  }
}
