// Wires the operator together: informers (MCPServers per watched namespace, the five kinds of
// child they own, and PlanPolicies) feed one work queue per kind; workers run the reconcilers,
// count and time every pass, and requeue errors with backoff. Secrets are never listed or
// watched (that would cache every Secret of the namespace, contents included): the Secrets the
// MCPServers reference are read by name, and looked at again every secretPollMs so a rotation
// rolls the pods. With leader election on, informers and workers run only while this replica
// holds the lease.
import { hostname } from 'node:os';
import type { KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION, FIELD_MANAGER, type MCPServer, type PlanPolicy } from './api/types.ts';
import type { OperatorDatabase } from './db/pool.ts';
import { CHILD_KINDS, MANAGED_BY, referencedSecretKeys } from './builders/mcpserver.ts';
import type { KubeClient, ResourceType } from './kube/client.ts';
import { EventRecorder } from './kube/events.ts';
import { Informer, keyOf } from './kube/informer.ts';
import { LeaderElector } from './leader.ts';
import type { OperatorMetrics } from './metrics.ts';
import { WorkQueue, type BackoffSettings } from './queue.ts';
import { errorReason, StaleRead } from './reconcile/errors.ts';
import { reconcileMcpServer, type ReconcileOutcome } from './reconcile/mcpserver.ts';
import { reconcilePlanPolicy } from './reconcile/planpolicy.ts';

export const MCPSERVERS: ResourceType = { apiVersion: API_VERSION, kind: 'MCPServer', plural: 'mcpservers', namespaced: true };
export const PLANPOLICIES: ResourceType = { apiVersion: API_VERSION, kind: 'PlanPolicy', plural: 'planpolicies', namespaced: false };
/** Every kind an MCPServer owns: a change to one (a deleted Service, an edited PDB) wakes its owner. */
export const CHILDREN: ResourceType[] = CHILD_KINDS.map((c) => ({ ...c, namespaced: true }));

export interface ControllerOptions {
  client: KubeClient;
  db: OperatorDatabase;
  metrics: OperatorMetrics;
  image: string;
  /** Namespaces whose MCPServers it manages; empty: every namespace. */
  namespaces: string[];
  /** This installation, stamped on what it manages (see builders/ownership.ts). */
  instance?: string;
  /** Where Events about cluster-scoped objects (PlanPolicies) go: the operator's own namespace. */
  eventNamespace?: string;
  /** How often the referenced Secrets are read again to notice a rotation. */
  secretPollMs?: number;
  resyncMs: number;
  watchIdleMs: number;
  leader?: { name: string; namespace: string; identity: string; leaseDurationMs: number; retryPeriodMs?: number; renewDeadlineMs?: number };
  /** Queue backoff after an error; any missing or unusable value falls back to the queue's default. */
  retry?: Partial<BackoffSettings>;
  inUseRetryMs?: number;
  log?: (line: string) => void;
}

/** The instance of an operator run without one (tests, a local run). */
export const DEFAULT_INSTANCE = 'cryptomcp-operator';
const DEFAULT_SECRET_POLL_MS = 30_000;
/** How soon a pass that read a stale cache looks again (the watch delivers within milliseconds). */
const STALE_RETRY_MS = 100;

/** namespace/name of the MCPServer that controls a child, from its owner reference. */
function ownerKey(obj: KubernetesObject | undefined): string | undefined {
  const ref = obj?.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'MCPServer' && r.apiVersion === API_VERSION);
  return ref && obj?.metadata?.namespace ? `${obj.metadata.namespace}/${ref.name}` : undefined;
}

/** Names of the Secrets an MCPServer references (none for a spec too broken to name any). */
function secretNames(mcp: MCPServer): Set<string> {
  if (!mcp.spec?.database?.secretRef?.name) return new Set();
  return new Set(referencedSecretKeys(mcp.spec).map((ref) => ref.split('/')[0]!));
}

interface Loop {
  kind: string;
  queue: WorkQueue;
  informers: Informer[];
  reconcile: (key: string) => Promise<ReconcileOutcome>;
}

export class Controller {
  private loops: Loop[] = [];
  private running = false;
  private elector: LeaderElector | undefined;
  private workers: Promise<void>[] = [];
  private secretPoll: NodeJS.Timeout | undefined;
  /** resourceVersion of each referenced Secret ("namespace/name") when last read. */
  private readonly secretVersions = new Map<string, string | undefined>();

  private readonly opts: ControllerOptions;
  private readonly events: EventRecorder;

  constructor(opts: ControllerOptions) {
    this.opts = opts;
    this.events = new EventRecorder(opts.client, { component: FIELD_MANAGER, instance: opts.leader?.identity ?? hostname(), clusterScopedNamespace: opts.eventNamespace, log: opts.log });
  }

  private get instance(): string {
    return this.opts.instance ?? DEFAULT_INSTANCE;
  }

  /**
   * Ready when this replica is a healthy standby, or leads and every informer has listed once;
   * otherwise the detail names the caches still missing.
   */
  readiness(): { ok: boolean; detail?: string } {
    if (!this.running) return this.elector ? { ok: true, detail: 'standing by for the lease' } : { ok: false, detail: 'not started' };
    const missing = this.loops.flatMap((l) => l.informers.filter((i) => !i.hasSynced).map((i) => i.description));
    return missing.length ? { ok: false, detail: `not listed yet: ${missing.join(', ')}` } : { ok: true };
  }

  get isLeading(): boolean {
    return this.running;
  }

  start(): void {
    const l = this.opts.leader;
    if (!l) {
      this.startLoops();
      return;
    }
    this.elector = new LeaderElector(this.opts.client, {
      ...l,
      onStartedLeading: () => this.startLoops(),
      onStoppedLeading: () => void this.stopLoops(),
      log: this.opts.log,
    });
    this.elector.start();
  }

  async stop(): Promise<void> {
    if (this.elector) await this.elector.stop();
    await this.stopLoops();
  }

  /**
   * Hands every cached object of a kind to its workers again, ahead of any backoff: for when
   * what they were failing on came back (the database, after an outage), so they do not wait
   * out a long retry delay.
   */
  retryNow(kind: string): void {
    for (const loop of this.loops.filter((l) => l.kind === kind)) {
      for (const inf of loop.informers.filter((i) => i.type.kind === kind)) for (const obj of inf.list()) loop.queue.add(keyOf(obj));
    }
  }

  /** Resolves when every informer of the running loops has listed once. */
  async synced(): Promise<void> {
    await Promise.all(this.loops.flatMap((l) => l.informers.map((i) => i.synced)));
  }

  /** toKeys maps a change to the keys of the loop's kind it affects (none, itself, its owner, its siblings). */
  private informer(loop: Loop, type: ResourceType, namespace: string | undefined, toKeys: (key: string, obj: KubernetesObject | undefined, previous: KubernetesObject | undefined) => string[], labelSelector?: string): Informer {
    const { metrics } = this.opts;
    return new Informer(this.opts.client, type, namespace, {
      labelSelector,
      resyncMs: this.opts.resyncMs,
      idleMs: this.opts.watchIdleMs,
      onChange: (key, obj, previous) => {
        for (const target of toKeys(key, obj, previous)) loop.queue.add(target);
      },
      onRestart: (reason) => metrics.watchRestarts.inc({ kind: type.kind, reason }),
      log: this.opts.log,
    });
  }

  private startLoops(): void {
    if (this.running) return;
    this.running = true;
    const { metrics, client, db } = this.opts;
    metrics.isLeader.set(1);
    const namespaces = this.opts.namespaces.length ? this.opts.namespaces : [undefined];
    const queue = (kind: string) => {
      metrics.workqueueDepth.set({ kind }, 0);
      return new WorkQueue({ ...this.opts.retry, onDepth: (d) => metrics.workqueueDepth.set({ kind }, d) });
    };

    const mcp: Loop = { kind: 'MCPServer', queue: queue('MCPServer'), informers: [], reconcile: async () => ({ result: 'success' }) };
    const mcpInformers = namespaces.map((ns) => this.informer(mcp, MCPSERVERS, ns, (key) => [key]));
    const mcpServers = () => mcpInformers.flatMap((i) => i.list()) as unknown as MCPServer[];
    // A change to a child wakes the MCPServer that controls it, so a deleted or edited child is
    // repaired at once rather than at the next resync. Only objects the operator manages are
    // listed and watched; a child's name is its owner's (deterministic), which also covers a
    // deletion whose object carries no owner reference any more.
    const childInformers = CHILDREN.flatMap((type) =>
      namespaces.map((ns) => this.informer(mcp, type, ns, (key, obj, previous) => [ownerKey(obj ?? previous) ?? key], `app.kubernetes.io/managed-by=${MANAGED_BY}`)),
    );
    mcp.informers = [...mcpInformers, ...childInformers];
    mcp.reconcile = (key) => {
      const obj = mcpInformers.map((i) => i.get(key)).find(Boolean) as MCPServer | undefined;
      return reconcileMcpServer({ client, events: this.events, image: this.opts.image, instance: this.instance }, obj);
    };
    // A Secret an MCPServer references (database URL, API keys, RPC URLs): a rotation changes the
    // config hash of the pod template, so the pods roll with the new value.
    this.secretPoll = setInterval(() => void this.pollSecrets(mcpServers, mcp.queue), this.opts.secretPollMs ?? DEFAULT_SECRET_POLL_MS);
    this.secretPoll.unref();

    const plans: Loop = { kind: 'PlanPolicy', queue: queue('PlanPolicy'), informers: [], reconcile: async () => ({ result: 'success' }) };
    // Policies naming one plan decide together which owns it (the oldest): a change to one (a
    // deletion, a rename of its plan) wakes the others, so a PlanConflict clears at once.
    const planOf = (o: KubernetesObject | undefined) => (o as PlanPolicy | undefined)?.spec?.plan;
    const planInformer: Informer = this.informer(plans, PLANPOLICIES, undefined, (key, obj, previous) => {
      const names = new Set([planOf(obj), planOf(previous)].filter(Boolean));
      const siblings = planInformer.list().filter((p) => keyOf(p) !== key && names.has(planOf(p)));
      return [key, ...siblings.map(keyOf)];
    });
    plans.informers = [planInformer];
    plans.reconcile = (key) =>
      reconcilePlanPolicy({ client, events: this.events, db, instance: this.instance, all: () => planInformer.list() as unknown as PlanPolicy[], inUseRetryMs: this.opts.inUseRetryMs }, planInformer.get(key) as unknown as PlanPolicy | undefined);

    this.loops = [mcp, plans];
    for (const loop of this.loops) {
      for (const inf of loop.informers) inf.start();
      // Two workers per kind: one slow pass (a database round trip) does not hold up the rest;
      // the queue never hands one key to two workers.
      this.workers.push(this.worker(loop), this.worker(loop));
    }
  }

  private async stopLoops(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.secretPoll);
    this.secretVersions.clear();
    this.opts.metrics.isLeader.set(0);
    for (const loop of this.loops) {
      for (const inf of loop.informers) inf.stop();
      loop.queue.shutdown();
    }
    await Promise.all(this.workers);
    await this.events.flush();
    this.workers = [];
    this.loops = [];
  }

  /**
   * Reads every Secret the MCPServers reference, by name (one GET each, however many MCPServers
   * share it), and wakes the MCPServers of each one whose resourceVersion moved since last time.
   */
  private async pollSecrets(mcpServers: () => MCPServer[], queue: WorkQueue): Promise<void> {
    const users = new Map<string, string[]>();
    for (const m of mcpServers()) {
      for (const name of secretNames(m)) {
        const key = `${m.metadata.namespace}/${name}`;
        users.set(key, [...(users.get(key) ?? []), `${m.metadata.namespace}/${m.metadata.name}`]);
      }
    }
    for (const [key, owners] of users) {
      const [namespace, name] = key.split('/') as [string, string];
      let version: string | undefined;
      try {
        version = (await this.opts.client.get('v1', 'Secret', namespace, name))?.metadata?.resourceVersion;
      } catch (err) {
        this.opts.log?.(`secret ${key} not read: ${(err as Error).message}`);
        continue;
      }
      if (!this.running) return;
      const known = this.secretVersions.has(key);
      if (known && this.secretVersions.get(key) !== version) for (const owner of owners) queue.add(owner);
      this.secretVersions.set(key, version);
    }
    for (const key of [...this.secretVersions.keys()]) if (!users.has(key)) this.secretVersions.delete(key);
  }

  private async worker(loop: Loop): Promise<void> {
    const { metrics } = this.opts;
    for (;;) {
      const key = await loop.queue.get();
      if (key === undefined) return;
      const end = metrics.reconcileDuration.startTimer({ kind: loop.kind });
      try {
        const outcome = await loop.reconcile(key);
        loop.queue.forget(key);
        if (outcome.result === 'requeue') loop.queue.addAfter(key, outcome.afterMs ?? 1000);
        metrics.reconcileTotal.inc({ kind: loop.kind, result: outcome.result });
      } catch (err) {
        if (err instanceof StaleRead) {
          loop.queue.forget(key);
          loop.queue.addAfter(key, STALE_RETRY_MS);
          metrics.reconcileTotal.inc({ kind: loop.kind, result: 'requeue' });
          continue;
        }
        const delay = loop.queue.addRateLimited(key);
        const reason = errorReason(err);
        metrics.reconcileTotal.inc({ kind: loop.kind, result: 'error' });
        metrics.reconcileErrors.inc({ kind: loop.kind, reason });
        this.opts.log?.(`reconcile ${loop.kind} ${key} failed, ${reason} (retry in ${delay} ms): ${(err as Error).message}`);
      } finally {
        end();
        loop.queue.done(key);
      }
    }
  }
}
