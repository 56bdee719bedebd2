// Kubernetes Events for the objects the operator manages (core/v1, what `kubectl describe` and
// `kubectl events` show), after client-go's EventRecorder: the same event for the same object
// again (a failure retried with backoff) updates one Event's count and lastTimestamp instead of
// creating another. Recording never fails a reconcile: an Event that cannot be written is logged
// and dropped. Cluster-scoped objects (PlanPolicy) get their Events in the operator's own
// namespace (`kubectl describe` finds them in any namespace), where its Role lets it write them:
// it has no rights in `default`.
import type { KubernetesObject } from '@kubernetes/client-node';
import { statusOf, type KubeClient } from './client.ts';

export type EventType = 'Normal' | 'Warning';

/** What an Event points at (any object the operator reads, custom or built-in). */
export interface EventSubject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventSink {
  record(obj: EventSubject, type: EventType, reason: string, message: string): void;
}

interface Recorded {
  name: string;
  namespace: string;
  count: number;
}

export interface RecorderOptions {
  component: string;
  instance: string;
  /** Where Events about cluster-scoped objects go (default: "default"). */
  clusterScopedNamespace?: string;
  log?: (line: string) => void;
  now?: () => Date;
}

const MAX_TRACKED = 4096;
/** The API server refuses longer messages. */
const MAX_MESSAGE = 1024;

export class EventRecorder implements EventSink {
  private readonly seen = new Map<string, Recorded>();
  private pending: Promise<void> = Promise.resolve();
  private sequence = 0;

  private readonly client: KubeClient;
  private readonly opts: RecorderOptions;

  constructor(client: KubeClient, opts: RecorderOptions) {
    this.client = client;
    this.opts = opts;
  }

  record(obj: EventSubject, type: EventType, reason: string, message: string): void {
    // One at a time, in order: a repeat must find the Event its first occurrence created.
    this.pending = this.pending.then(() => this.write(obj, type, reason, message.slice(0, MAX_MESSAGE))).catch((err: unknown) => {
      this.opts.log?.(`event ${reason} for ${obj.kind} ${obj.metadata?.name} not recorded: ${(err as Error).message}`);
    });
  }

  /** Resolves once every event recorded so far has been written (or dropped). */
  flush(): Promise<void> {
    return this.pending;
  }

  private async write(obj: EventSubject, type: EventType, reason: string, message: string): Promise<void> {
    const meta = obj.metadata ?? {};
    const key = JSON.stringify([meta.uid ?? `${meta.namespace}/${meta.name}`, type, reason, message]);
    const now = (this.opts.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const previous = this.seen.get(key);
    if (previous) {
      try {
        await this.client.mergePatch({ apiVersion: 'v1', kind: 'Event', metadata: { name: previous.name, namespace: previous.namespace }, count: previous.count + 1, lastTimestamp: now } as KubernetesObject);
        previous.count += 1;
        return;
      } catch (err) {
        if (statusOf(err) !== 404) throw err;
        this.seen.delete(key); // expired (events live an hour by default): start a new one
      }
    }
    const namespace = meta.namespace ?? this.opts.clusterScopedNamespace ?? 'default';
    const name = `${meta.name}.${(Date.now() * 1000 + (this.sequence++ % 1000)).toString(16)}`;
    await this.client.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.opts.component },
      reportingComponent: this.opts.component,
      reportingInstance: this.opts.instance,
    } as KubernetesObject);
    this.seen.set(key, { name, namespace, count: 1 });
    if (this.seen.size > MAX_TRACKED) this.seen.delete(this.seen.keys().next().value!);
  }
}
