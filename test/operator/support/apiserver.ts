// A small stand-in for the Kubernetes API server, over real HTTP on loopback: there is no
// kube-apiserver binary to be had on this machine (DESIGN §7). It implements the documented
// behaviour the operator and kubectl rely on, and nothing more:
//
//   discovery        /api, /apis, /api/v1, /apis/<group>/<version> (legacy, unaggregated form)
//   list             resourceVersion in list metadata; labelSelector (a=b, a!=b, a, comma-ANDed)
//                    and fieldSelector metadata.name / metadata.namespace
//   watch            ?watch=true from a resourceVersion: replays the event log after it, then
//                    (sendInitialEvents=true: the current objects, then the initial-events-end bookmark)
//                    streams ADDED / MODIFIED / DELETED; BOOKMARK events when allowWatchBookmarks;
//                    an ERROR event with a 410 Status ("Expired") when the version was compacted;
//                    timeoutSeconds
//   get/create/put   409 AlreadyExists on create; 409 Conflict on a stale resourceVersion;
//                    metadata.generation bumped when anything but metadata/status changes
//   patch            application/merge-patch+json (RFC 7386); application/strategic-merge-patch+json
//                    treated as a merge patch (enough for kubectl's client-side apply of the objects
//                    here); application/apply-patch+yaml = server-side apply with fieldManager:
//                    creates if absent, merges maps, replaces lists whole, and drops the fields the
//                    same manager applied last time but no longer sends (unless another manager
//                    applied them too: shared ownership)
//   status           /status subresource for the kinds that have one; the main endpoint ignores
//                    status changes, the subresource ignores everything else
//   scale            /scale subresource of CRDs that declare one (autoscaling/v1 Scale)
//   names            Services need DNS-1035 labels, everything else DNS-1123 subdomains
//   delete           finalizers: deletionTimestamp set, object kept until the last finalizer goes;
//                    then ownerReference garbage collection (background, by uid, recursively);
//                    an object created with owner references to no existing object is collected
//   CRDs             MCPServer and PlanPolicy from crds/: scope, short names, printer columns
//                    (Table responses for kubectl get), schema validation with defaults and CEL
//                    (422 Invalid), as test/operator/support/crd-schema.ts models it
//   HPAs             a Deployment an HPA targets is scaled into [minReplicas, maxReplicas]
//   Deployments      replicas defaults to 1; a simulated controller sets status (observedGeneration, replicas, updated,
//                    ready, available, Available condition) one tick after each spec change,
//                    unless holdRollouts is set
//   faults           conflicts(n): the next n writes answer 409; dropWatches(); idleWatches (open
//                    streams stop delivering); compact() (older versions answer 410); restart();
//                    deny(kind, message): writes of a kind refused as by an admission webhook;
//                    hangLeaseWritesBy(identity): that holder's lease updates never answered
//   authn/authz      bearer tokens from tokenFor(serviceAccount); enforceRbac(objects) with the
//                    Roles, ClusterRoles and bindings `helm template` renders: every request of
//                    a ServiceAccount is authorized as kube-apiserver's RBAC authorizer does
//                    (support/rbac.ts), 403 Forbidden otherwise, including the
//                    OwnerReferencesPermissionEnforcement check (an owner reference with
//                    blockOwnerDeletion needs update on the owner's finalizers). A request
//                    without a token is the test's own admin (kubectl, fixtures).
//   field managers   metadata.managedFields (support/fields.ts); an apply without force=true
//                    that changes a field another manager owns answers 409 Conflict, naming them
//   status           written through /status (or apply to it) is validated against the CRD's
//                    openAPIV3Schema (422 Invalid), and fields the schema does not declare are
//                    pruned, spec and status alike, as for a structural schema
//   pagination       list with limit answers a continue token (and remainingItemCount); a token
//                    older than the compacted history answers 410 Expired
//   bookmarks        every bookmarkIntervalMs (default 60 s, as kube-apiserver sends them about
//                    once a minute); tests that want them sooner say so
//   pods             with { pods: true }: the simulated Deployment controller keeps one Pod per
//                    replica; a pod scaled away is Terminating until onPodTerminating (the
//                    test's kubelet: stop the process it stands for) resolves, then goes
//
// Not modelled: admission webhooks, strategic-merge list semantics (lists are replaced; keyed
// lists are owned whole), protobuf, aggregated discovery, OpenAPI documents, consistent
// snapshots across list pages (a page shows the store as it is then), dry runs,
// foreground/orphan deletion, and every kind not listed below.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { loadCrd, validate, type Crd, type Schema } from './crd-schema.ts';
import { FieldOwners } from './fields.ts';
import { forbiddenMessage, Rbac, type Attributes } from './rbac.ts';

type Obj = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec?: unknown;
  status?: Record<string, unknown>;
};
interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { uid: string; kind: string; name: string }[];
  [k: string]: unknown;
}

interface Resource {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  status: boolean;
  shortNames?: string[];
  crd?: Crd;
  /** The CRD's scale subresource: where replicas and the selector live. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

const CRDS = [loadCrd('mcpservers.cryptomcp.dev.yaml'), loadCrd('planpolicies.cryptomcp.dev.yaml')];

const RESOURCES: Resource[] = [
  { group: '', version: 'v1', plural: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false, status: false, shortNames: ['ns'] },
  { group: '', version: 'v1', plural: 'services', singular: 'service', kind: 'Service', namespaced: true, status: true, shortNames: ['svc'] },
  { group: '', version: 'v1', plural: 'secrets', singular: 'secret', kind: 'Secret', namespaced: true, status: false },
  { group: '', version: 'v1', plural: 'events', singular: 'event', kind: 'Event', namespaced: true, status: false, shortNames: ['ev'] },
  { group: '', version: 'v1', plural: 'pods', singular: 'pod', kind: 'Pod', namespaced: true, status: true, shortNames: ['po'] },
  { group: 'apps', version: 'v1', plural: 'deployments', singular: 'deployment', kind: 'Deployment', namespaced: true, status: true, shortNames: ['deploy'] },
  { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', singular: 'ingress', kind: 'Ingress', namespaced: true, status: true, shortNames: ['ing'] },
  { group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', kind: 'HorizontalPodAutoscaler', namespaced: true, status: true, shortNames: ['hpa'] },
  { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', singular: 'poddisruptionbudget', kind: 'PodDisruptionBudget', namespaced: true, status: true, shortNames: ['pdb'] },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', singular: 'lease', kind: 'Lease', namespaced: true, status: false },
  ...CRDS.map((crd) => ({
    group: crd.spec.group,
    version: crd.spec.versions[0]!.name,
    plural: crd.spec.names.plural,
    singular: crd.spec.names.kind.toLowerCase(),
    kind: crd.spec.names.kind,
    namespaced: crd.spec.scope === 'Namespaced',
    status: Boolean(crd.spec.versions[0]!.subresources?.status),
    shortNames: crd.spec.names.shortNames,
    crd,
    scale: (crd.spec.versions[0]!.subresources as { scale?: Resource['scale'] } | undefined)?.scale,
  })),
];

const gv = (r: Resource) => (r.group ? `${r.group}/${r.version}` : r.version);

interface Event {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Watcher {
  resource: Resource;
  namespace: string | undefined;
  name: string | undefined;
  labelSelector: string | undefined;
  bookmarks: boolean;
  res: http.ServerResponse;
}

export class HttpError extends Error {
  readonly code: number;
  readonly reason: string;

  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

export interface StandInOptions {
  /** Milliseconds between BOOKMARK events on watches that asked for them (default 60 s, as kube-apiserver). */
  bookmarkIntervalMs?: number;
  /** Delay of the simulated Deployment controller. */
  rolloutDelayMs?: number;
  /** The simulated Deployment controller keeps Pods too (one per replica). */
  pods?: boolean;
}

/** Who sent a request: undefined for the test's own admin (no token). */
interface Caller {
  user: string;
  groups: string[];
}

export const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;

export class StandInApiServer {
  private server: http.Server | undefined;
  private readonly store = new Map<string, Obj>();
  private readonly events = new Map<string, Event[]>();
  /** Events at or below this version were compacted away: watching from them answers 410. */
  private compactedThrough = 0;
  private rv = 1;
  private readonly watchers = new Set<Watcher>();
  private readonly applied = new Map<string, unknown>();
  private readonly bookmarkTimer: NodeJS.Timeout;
  private pendingConflicts = 0;
  private readonly denials = new Map<string, string>();
  private readonly hungLeaseHolders = new Set<string>();
  private readonly hung = new Set<http.ServerResponse>();
  private readonly tokens = new Map<string, Caller>();
  private rbac: Rbac | undefined;
  private readonly fields = new FieldOwners();
  port = 0;
  /** Every request that came with a token (or impersonation): "<user> <method> <path>". */
  readonly authenticated: string[] = [];
  /** Every request RBAC refused: "<user> <verb> <group>/<resource> <namespace>/<name>". */
  readonly forbidden: string[] = [];
  /** The test's kubelet: resolves once the process a Terminating pod stands for has stopped. */
  onPodTerminating: ((pod: Obj) => Promise<void>) | undefined;
  /** Open watch streams stop delivering events (a hung connection) while true. */
  idleWatches = false;
  /** CRD schema validation on writes; off simulates objects stored under an older CRD. */
  admission = true;
  /** The simulated Deployment controller leaves status alone while true. */
  holdRollouts = false;
  /** Every write that reached storage: "<verb> <kind>/<ns>/<name>[/status]". */
  readonly writes: string[] = [];
  /** Every request: "<method> <path>". */
  readonly requests: string[] = [];
  /** Rounds of bookmarks sent to the open watches: a clock the watchers hear ("nothing happened for three rounds"). */
  bookmarkRounds = 0;

  private readonly opts: StandInOptions;

  constructor(opts: StandInOptions = {}) {
    this.opts = opts;
    this.bookmarkTimer = setInterval(() => this.sendBookmarks(), opts.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS);
    this.bookmarkTimer.unref();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    await this.shutdown();
  }

  /** Like an API server restart: every connection drops, storage (etcd) survives, same port. */
  async restart(): Promise<void> {
    await this.shutdown();
    await this.start(this.port);
  }

  private async shutdown(): Promise<void> {
    this.dropWatches();
    this.releaseHungLeases();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /**
   * From now on every request with a ServiceAccount's token is authorized against the RBAC
   * objects among `objects` (typically everything `helm template` rendered); more can be added.
   */
  enforceRbac(objects: unknown[]): void {
    this.rbac ??= new Rbac();
    this.rbac.load(objects);
  }

  /** A bearer token for a ServiceAccount ("namespace:name"), as the token the kubelet mounts. */
  tokenFor(serviceAccount: string): string {
    const [namespace] = serviceAccount.split(':');
    const token = `standin-${randomUUID()}`;
    this.tokens.set(token, { user: `system:serviceaccount:${serviceAccount}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] });
    return token;
  }

  /**
   * Every write of a kind answers 403 from a (simulated) validating admission webhook with this
   * message, until allow(kind): a policy engine refusing what the operator applies.
   */
  deny(kind: string, message: string): void {
    this.denials.set(kind, message);
  }

  allow(kind: string): void {
    this.denials.delete(kind);
  }

  /** Lease updates naming this holder are never answered (the connection stays open) until releaseHungLeases(). */
  hangLeaseWritesBy(identity: string): void {
    this.hungLeaseHolders.add(identity);
  }

  releaseHungLeases(): void {
    this.hungLeaseHolders.clear();
    for (const res of this.hung) res.destroy();
    this.hung.clear();
  }

  /** The next n writes (create, update, patch, delete) answer 409 Conflict. */
  conflicts(n: number): void {
    this.pendingConflicts = n;
  }

  /** Ends every watch stream cleanly, as kube-apiserver does when a watch reaches its timeout. */
  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Forget the event history: a watch from any version before now answers 410 Gone. */
  compact(): void {
    this.compactedThrough = this.rv;
    for (const list of this.events.values()) list.length = 0;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Every stored version of one object still in the event history, oldest first. */
  versions(kind: string, namespace: string | undefined, name: string): Obj[] {
    const r = this.byKind(kind);
    return (this.events.get(`${gv(r)}/${r.plural}`) ?? [])
      .filter((e) => e.type !== 'DELETED' && e.object.metadata.name === name && (!r.namespaced || e.object.metadata.namespace === namespace))
      .map((e) => structuredClone(e.object));
  }

  openWatches(kind?: string): number {
    return [...this.watchers].filter((w) => !kind || w.resource.kind === kind).length;
  }

  // ---- direct access for tests (the same code paths as HTTP, minus the socket) ----

  get(kind: string, namespace: string | undefined, name: string): Obj | undefined {
    const r = this.byKind(kind);
    const o = this.store.get(this.key(r, namespace, name));
    return o ? structuredClone(o) : undefined;
  }

  list(kind: string, namespace?: string): Obj[] {
    const r = this.byKind(kind);
    return this.items(r, namespace).map((o) => structuredClone(o));
  }

  create(obj: Obj): Obj {
    const r = this.byKind(obj.kind);
    return this.createObject(r, obj.metadata.namespace, obj);
  }

  setStatus(kind: string, namespace: string | undefined, name: string, status: Record<string, unknown>): Obj {
    const r = this.byKind(kind);
    const cur = this.mustGet(r, namespace, name);
    return this.commit(r, { ...cur, status }, 'MODIFIED', `status ${kind}/${namespace}/${name}`);
  }

  remove(kind: string, namespace: string | undefined, name: string): void {
    this.deleteObject(this.byKind(kind), namespace, name);
  }

  // ---- HTTP ----

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push(`${req.method} ${url.pathname}`);
    try {
      const body = await readBody(req);
      if (req.method === 'PUT' && url.pathname.includes('/leases/') && this.hungLeaseHolders.has(String((JSON.parse(body || '{}') as { spec?: { holderIdentity?: string } }).spec?.holderIdentity))) {
        this.hung.add(res); // never answered: a renewal stuck on a half-open connection
        return;
      }
      const auth = req.headers.authorization;
      let caller: Caller | undefined;
      if (auth) {
        caller = this.tokens.get(auth.replace(/^Bearer\s+/i, ''));
        if (!caller) throw new HttpError(401, 'Unauthorized', 'Unauthorized');
      }
      // kubectl sends no bearer token over plain HTTP: it acts as a ServiceAccount with --as
      // (impersonation, which only the admin may use here).
      const as = req.headers['impersonate-user'];
      if (typeof as === 'string' && !caller) {
        const ns = /^system:serviceaccount:([^:]+):/.exec(as)?.[1];
        caller = { user: as, groups: ['system:authenticated', ...(ns ? ['system:serviceaccounts', `system:serviceaccounts:${ns}`] : [])] };
      }
      if (caller) this.authenticated.push(`${caller.user} ${req.method} ${url.pathname}`);
      const result = this.route(req, url, body, res, caller);
      if (result === undefined) return; // a watch owns the response now
      send(res, 200, result);
    } catch (err) {
      if (err instanceof HttpError) {
        send(res, err.code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason, code: err.code });
      } else {
        send(res, 500, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: (err as Error).message, reason: 'InternalError', code: 500 });
      }
    }
  }

  private authorize(caller: Caller | undefined, a: Omit<Attributes, 'user' | 'groups'>): void {
    if (!caller || !this.rbac) return;
    const attrs = { ...a, user: caller.user, groups: caller.groups };
    if (this.rbac.allows(attrs)) return;
    this.forbidden.push(`${caller.user} ${a.verb} ${a.group}/${a.resource} ${a.namespace ?? ''}/${a.name ?? ''}`);
    throw new HttpError(403, 'Forbidden', forbiddenMessage(attrs));
  }

  /** OwnerReferencesPermissionEnforcement: blocking an owner's deletion needs update on its finalizers. */
  private authorizeOwnerRefs(caller: Caller | undefined, namespace: string | undefined, input: unknown): void {
    const refs = ((input as Obj | undefined)?.metadata?.ownerReferences ?? []) as { apiVersion?: string; kind: string; name: string; blockOwnerDeletion?: boolean }[];
    for (const ref of refs.filter((x) => x.blockOwnerDeletion)) {
      const owner = RESOURCES.find((x) => x.kind === ref.kind && gv(x) === ref.apiVersion);
      if (!owner) continue;
      this.authorize(caller, { verb: 'update', group: owner.group, resource: `${owner.plural}/finalizers`, namespace: owner.namespaced ? namespace : undefined, name: ref.name });
    }
  }

  private route(req: http.IncomingMessage, url: URL, body: string, res: http.ServerResponse, caller: Caller | undefined): unknown {
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.port}` }] };
    if (path === '/apis') return this.groupList();
    if (path === '/version') return { major: '1', minor: '35', gitVersion: 'v1.35.0-standin', platform: 'linux/amd64' };
    if (path === '/healthz' || path === '/readyz' || path === '/livez') return 'ok';
    if (path === '/openapi/v3') return this.openapiRoot();
    if (path.startsWith('/openapi/v3/')) return this.openapiGroupVersion(path.slice('/openapi/v3/'.length));
    const parts = path.split('/').filter(Boolean);
    let group = '';
    let version: string;
    let rest: string[];
    if (parts[0] === 'api' && parts[1]) {
      version = parts[1];
      rest = parts.slice(2);
    } else if (parts[0] === 'apis' && parts[1] && parts[2]) {
      group = parts[1];
      version = parts[2];
      rest = parts.slice(3);
    } else {
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    }
    if (rest.length === 0) return this.resourceList(group, version);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, sub] = rest;
    const r = RESOURCES.find((x) => x.group === group && x.version === version && x.plural === plural);
    if (!r) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    if (sub !== undefined && !(sub === 'status' && r.status) && !(sub === 'scale' && r.scale)) throw new HttpError(404, 'NotFound', `no subresource ${sub}`);
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const watching = q.get('watch') === 'true' || q.get('watch') === '1';
    const verb = { GET: name ? 'get' : watching ? 'watch' : 'list', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: name ? 'delete' : 'deletecollection' }[method] ?? method.toLowerCase();
    const attrs = { verb, group, resource: sub ? `${plural}/${sub}` : plural!, namespace: r.namespaced ? namespace : undefined, name };
    this.authorize(caller, attrs);
    if (['POST', 'PUT', 'PATCH'].includes(method) && body) {
      const input = parse(body, String(req.headers['content-type'] ?? ''));
      this.authorizeOwnerRefs(caller, namespace, input);
      // Server-side apply that creates the object needs create as well as patch.
      if (method === 'PATCH' && String(req.headers['content-type']).startsWith('application/apply-patch') && !this.store.has(this.key(r, namespace, name!))) this.authorize(caller, { ...attrs, verb: 'create' });
    }
    if (sub === 'scale') return this.scaleSubresource(r, namespace, name!, method, body, String(req.headers['content-type'] ?? ''));
    if (!name) {
      if (method === 'GET' && watching) {
        this.watch(r, namespace, q, res);
        return undefined;
      }
      if (method === 'GET') return this.listResponse(r, namespace, q, req.headers.accept);
      if (method === 'POST') {
        const obj = parse(body, req.headers['content-type']) as Obj;
        return this.guardWrite(r, () => this.createObject(r, namespace, obj, { manager: q.get('fieldManager') ?? 'unknown', operation: 'Update' }));
      }
      throw new HttpError(405, 'MethodNotAllowed', `${method} not allowed on a collection`);
    }
    if (method === 'GET') {
      const o = this.mustGet(r, namespace, name);
      return this.wantsTable(req.headers.accept) ? this.table(r, [o], String(this.rv)) : o;
    }
    return this.guardWrite(r, () => {
      if (method === 'DELETE') return this.deleteObject(r, namespace, name);
      const patchType = String(req.headers['content-type'] ?? '').split(';')[0] ?? '';
      const input = parse(body, patchType);
      if (method === 'PUT') return this.replace(r, namespace, name, input as Obj, sub === 'status', q.get('fieldManager') ?? 'unknown');
      if (method === 'PATCH') return this.patch(r, namespace, name, input, patchType, q, sub === 'status');
      throw new HttpError(405, 'MethodNotAllowed', `${method} not allowed`);
    });
  }

  /**
   * autoscaling/v1 Scale of a custom resource (what `kubectl scale` and autoscalers use): reads
   * the CRD's specReplicasPath / statusReplicasPath / labelSelectorPath; a write sets the spec
   * path through the same admission (schema and CEL) as any update of the object.
   */
  private scaleSubresource(r: Resource, namespace: string | undefined, name: string, method: string, body: string, contentType: string): unknown {
    const paths = r.scale!;
    const toScale = (o: Obj) => ({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: o.metadata.name, namespace: o.metadata.namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
      spec: { replicas: Number(atPath(o, paths.specReplicasPath) ?? 0) },
      status: { replicas: Number(atPath(o, paths.statusReplicasPath) ?? 0), ...(paths.labelSelectorPath && atPath(o, paths.labelSelectorPath) ? { selector: atPath(o, paths.labelSelectorPath) } : {}) },
    });
    const cur = this.mustGet(r, namespace, name);
    if (method === 'GET') return toScale(cur);
    if (method !== 'PUT' && method !== 'PATCH') throw new HttpError(405, 'MethodNotAllowed', `${method} not allowed on scale`);
    return this.guardWrite(r, () => {
      const input = parse(body, contentType) as { metadata?: { resourceVersion?: string }; spec?: { replicas?: number } };
      if (input.metadata?.resourceVersion && input.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${r.plural} "${name}": the object has been modified`);
      }
      const replicas = input.spec?.replicas;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) throw new HttpError(422, 'Invalid', 'Scale.autoscaling "' + name + '" is invalid: spec.replicas: Invalid value: must be a non-negative integer');
      const next = structuredClone(cur);
      setPath(next, paths.specReplicasPath, replicas);
      return toScale(this.update(r, cur, next, false, 'scale'));
    });
  }

  private guardWrite<T>(r: Resource, fn: () => T): T {
    const denial = this.denials.get(r.kind);
    if (denial !== undefined) throw new HttpError(403, 'Forbidden', `admission webhook "policy.example.com" denied the request: ${denial}`);
    if (this.pendingConflicts > 0) {
      this.pendingConflicts -= 1;
      throw new HttpError(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again (injected)');
    }
    return fn();
  }

  private groupList() {
    const groups = new Map<string, string>();
    for (const r of RESOURCES) if (r.group) groups.set(r.group, r.version);
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, version]) => ({ name, versions: [{ groupVersion: `${name}/${version}`, version }], preferredVersion: { groupVersion: `${name}/${version}`, version } })),
    };
  }

  private resourceList(group: string, version: string) {
    const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
    if (rs.length === 0) throw new HttpError(404, 'NotFound', `no group version ${group}/${version}`);
    const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: rs.flatMap((r) => [
        { name: r.plural, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs, ...(r.shortNames ? { shortNames: r.shortNames } : {}), ...(r.crd ? { categories: ['cryptomcp'] } : {}) },
        ...(r.status ? [{ name: `${r.plural}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] }] : []),
        ...(r.scale ? [{ name: `${r.plural}/scale`, singularName: '', namespaced: r.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] }] : []),
      ]),
    };
  }

  /**
   * Just enough OpenAPI v3 for kubectl to find that PATCH takes ?fieldValidation (so it leaves
   * validation to the server, which checks CRDs against their schemas); no component schemas.
   */
  private openapiRoot() {
    const gvs = [...new Set(RESOURCES.map((r) => (r.group ? `apis/${gv(r)}` : 'api/v1')))];
    return { paths: Object.fromEntries(gvs.map((g) => [g, { serverRelativeURL: `/openapi/v3/${g}?hash=standin` }])) };
  }

  private openapiGroupVersion(gvPath: string) {
    const rs = RESOURCES.filter((r) => (r.group ? `apis/${gv(r)}` : 'api/v1') === gvPath);
    if (rs.length === 0) throw new HttpError(404, 'NotFound', `no OpenAPI document for ${gvPath}`);
    const paths: Record<string, unknown> = {};
    for (const r of rs) {
      const base = `/${gvPath}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}/{name}`;
      paths[base] = {
        patch: {
          parameters: [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }, { name: 'fieldManager', in: 'query', schema: { type: 'string' } }],
          'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind: r.kind },
          responses: { '200': { description: 'OK' } },
        },
      };
    }
    return { openapi: '3.0.0', info: { title: 'Kubernetes (stand-in)', version: 'v1.35.0' }, paths, components: { schemas: {} } };
  }

  private byKind(kind: string): Resource {
    const r = RESOURCES.find((x) => x.kind === kind);
    if (!r) throw new Error(`unknown kind ${kind}`);
    return r;
  }

  private key(r: Resource, namespace: string | undefined, name: string): string {
    return `${gv(r)}/${r.plural}/${r.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  private items(r: Resource, namespace: string | undefined): Obj[] {
    const prefix = `${gv(r)}/${r.plural}/`;
    return [...this.store.entries()]
      .filter(([k, o]) => k.startsWith(prefix) && (!namespace || !r.namespaced || o.metadata.namespace === namespace))
      .map(([, o]) => o)
      .sort((a, b) => {
        const x = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
        const y = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
        return x < y ? -1 : x > y ? 1 : 0;
      });
  }

  private mustGet(r: Resource, namespace: string | undefined, name: string): Obj {
    const o = this.store.get(this.key(r, namespace, name));
    if (!o) throw new HttpError(404, 'NotFound', `${r.plural}.${r.group || 'core'} "${name}" not found`);
    return o;
  }

  private listResponse(r: Resource, namespace: string | undefined, q: URLSearchParams, accept: string | undefined) {
    let items = this.items(r, namespace).filter((o) => matches(o, q.get('labelSelector') ?? undefined, q.get('fieldSelector') ?? undefined));
    let rv = String(this.rv);
    const token = q.get('continue');
    if (token) {
      let from: { rv: string; after: string };
      try {
        from = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv: string; after: string };
      } catch {
        throw new HttpError(400, 'BadRequest', 'continue key is not valid');
      }
      if (Number(from.rv) < this.compactedThrough) throw new HttpError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      rv = from.rv;
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` > from.after);
    }
    const limit = Number(q.get('limit') ?? 0);
    const metadata: Record<string, unknown> = { resourceVersion: rv };
    if (limit > 0 && items.length > limit) {
      const last = items[limit - 1]!;
      metadata.continue = Buffer.from(JSON.stringify({ rv, after: `${last.metadata.namespace ?? ''}/${last.metadata.name}` })).toString('base64url');
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
    }
    if (this.wantsTable(accept)) return this.table(r, items, rv);
    return { kind: `${r.kind}List`, apiVersion: gv(r), metadata, items };
  }

  private wantsTable(accept: string | undefined): boolean {
    return Boolean(accept?.includes('as=Table'));
  }

  /** meta.k8s.io/v1 Table, with the CRD's printer columns (what `kubectl get` prints). */
  private table(r: Resource, items: Obj[], rv: string) {
    const cols = r.crd?.spec.versions[0]!.additionalPrinterColumns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
    const columns = [{ name: 'Name', type: 'string', format: 'name', description: 'Name', priority: 0 }, ...cols.map((c) => ({ name: c.name, type: (c as { type?: string }).type ?? 'string', format: '', description: '', priority: (c as { priority?: number }).priority ?? 0 }))];
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: rv },
      columnDefinitions: columns,
      rows: items.map((o) => ({
        cells: [o.metadata.name, ...cols.map((c) => ((c as { type?: string }).type === 'date' ? age(jsonPath(o, c.jsonPath)) : (jsonPath(o, c.jsonPath) ?? '')))],
        object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
      })),
    };
  }

  // ---- writes ----

  private commit(r: Resource, obj: Obj, type: 'ADDED' | 'MODIFIED', what: string): Obj {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    const k = this.key(r, obj.metadata.namespace, obj.metadata.name);
    this.store.set(k, obj);
    this.writes.push(what);
    this.emit(r, { rv: this.rv, type, object: structuredClone(obj) });
    if (r.kind === 'Deployment') this.simulateRollout(r, obj);
    if (type === 'ADDED' && obj.metadata.ownerReferences?.length) this.collectIfOrphaned(r, obj);
    if (r.kind === 'HorizontalPodAutoscaler' || r.kind === 'Deployment') this.simulateAutoscaler(obj.metadata.namespace, r.kind === 'Deployment' ? obj.metadata.name : ((obj.spec as { scaleTargetRef?: { name?: string } }).scaleTargetRef?.name ?? ''));
    return structuredClone(obj);
  }

  /**
   * Schema admission. A status write is judged on its status alone: a spec stored before the
   * schema forbade it stays as it is (validation ratcheting), and must not block status.
   */
  private admit(r: Resource, obj: Obj, old: Obj | undefined, statusOnly = false): void {
    if (!r.crd || !this.admission) return;
    // A structural schema drops what it does not declare (spec and status alike) before validating.
    const schema = r.crd.spec.versions[0]!.schema.openAPIV3Schema;
    for (const part of ['spec', 'status'] as const) {
      if (obj[part] !== undefined && schema.properties?.[part]) obj[part] = prune(schema.properties[part], obj[part]) as never;
    }
    const errors = validate(r.crd, obj, old).filter((e) => !statusOnly || e.startsWith('/status'));
    if (errors.length) throw new HttpError(422, 'Invalid', `${r.kind}.${r.group} "${obj.metadata.name}" is invalid: ${errors.join('; ')}`);
  }

  /** The defaults the CRD schema declares, applied like the API server does on write. */
  private withDefaults(r: Resource, obj: Obj): Obj {
    if (r.kind === 'Deployment') {
      const spec = (obj.spec ?? {}) as { replicas?: number };
      // Deployment defaulting: replicas 1 when nobody sets it (an HPA then scales it).
      if (spec.replicas === undefined) obj.spec = { ...spec, replicas: 1 };
      return obj;
    }
    if (!r.crd) return obj;
    return applyDefaults(r.crd.spec.versions[0]!.schema.openAPIV3Schema as never, obj) as Obj;
  }

  private createObject(r: Resource, namespace: string | undefined, input: Obj, write?: Write): Obj {
    const obj = structuredClone(input);
    obj.apiVersion = gv(r);
    obj.kind = r.kind;
    if (r.namespaced) obj.metadata.namespace = namespace ?? obj.metadata.namespace ?? 'default';
    else delete obj.metadata.namespace;
    if (!obj.metadata.name) throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    checkName(r, obj.metadata.name);
    if (this.store.has(this.key(r, obj.metadata.namespace, obj.metadata.name))) {
      throw new HttpError(409, 'AlreadyExists', `${r.plural}.${r.group || 'core'} "${obj.metadata.name}" already exists`);
    }
    this.admit(r, obj, undefined);
    const stored = this.withDefaults(r, obj);
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    stored.metadata.generation = 1;
    delete stored.metadata.deletionTimestamp;
    if (r.status) delete stored.status;
    const k = this.key(r, stored.metadata.namespace, stored.metadata.name);
    this.fields.forget(k);
    if (write) this.fields.record(k, write.manager, write.operation, gv(r), false, undefined, stored, write.applied);
    stored.metadata.managedFields = this.fields.managedFields(k);
    return this.commit(r, stored, 'ADDED', `create ${r.kind}/${stored.metadata.namespace ?? ''}/${stored.metadata.name}`);
  }

  /** Stores `next` as the new version of `cur`, keeping what this endpoint may not change. */
  private update(r: Resource, cur: Obj, next: Obj, statusOnly: boolean, verb: string, write?: Write): Obj {
    let merged: Obj;
    if (statusOnly) {
      merged = { ...structuredClone(cur), status: next.status };
      this.admit(r, merged, cur, true);
    } else {
      merged = structuredClone(next);
      merged.apiVersion = cur.apiVersion;
      merged.kind = cur.kind;
      merged.metadata = { ...merged.metadata, name: cur.metadata.name, namespace: cur.metadata.namespace, uid: cur.metadata.uid, creationTimestamp: cur.metadata.creationTimestamp, generation: cur.metadata.generation };
      if (cur.metadata.deletionTimestamp) merged.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      else delete merged.metadata.deletionTimestamp;
      if (r.status) {
        if (cur.status === undefined) delete merged.status;
        else merged.status = cur.status;
      }
      merged = this.withDefaults(r, merged);
      this.admit(r, merged, cur);
      if (JSON.stringify(withoutMetaStatus(merged)) !== JSON.stringify(withoutMetaStatus(cur))) merged.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    }
    if (cur.metadata.deletionTimestamp && (merged.metadata.finalizers ?? []).length === 0) {
      this.store.delete(this.key(r, cur.metadata.namespace, cur.metadata.name));
      this.rv += 1;
      merged.metadata.resourceVersion = String(this.rv);
      this.writes.push(`finalize ${r.kind}/${cur.metadata.namespace ?? ''}/${cur.metadata.name}`);
      this.emit(r, { rv: this.rv, type: 'DELETED', object: merged });
      this.collectGarbage(cur.metadata.uid!);
      return merged;
    }
    merged.metadata.managedFields = cur.metadata.managedFields;
    // An unchanged write is a no-op: no new resourceVersion, no event (as the API server does).
    if (JSON.stringify({ ...merged, metadata: { ...merged.metadata, resourceVersion: undefined } }) === JSON.stringify({ ...cur, metadata: { ...cur.metadata, resourceVersion: undefined } })) {
      return structuredClone(cur);
    }
    const k = this.key(r, cur.metadata.namespace, cur.metadata.name);
    if (write) this.fields.record(k, write.manager, write.operation, gv(r), statusOnly, cur, merged, write.applied);
    merged.metadata.managedFields = this.fields.managedFields(k);
    return this.commit(r, merged, 'MODIFIED', `${verb} ${r.kind}/${cur.metadata.namespace ?? ''}/${cur.metadata.name}${statusOnly ? '/status' : ''}`);
  }

  private replace(r: Resource, namespace: string | undefined, name: string, input: Obj, statusOnly: boolean, manager: string): Obj {
    const cur = this.mustGet(r, namespace, name);
    const want = input.metadata?.resourceVersion;
    if (want && want !== cur.metadata.resourceVersion) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${r.plural}.${r.group || 'core'} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    return this.update(r, cur, input, statusOnly, 'update', { manager, operation: 'Update' });
  }

  private patch(r: Resource, namespace: string | undefined, name: string, patch: unknown, type: string, q: URLSearchParams, statusOnly: boolean): Obj {
    const k = this.key(r, namespace, name);
    const cur = this.store.get(k);
    if (type === 'application/apply-patch+yaml') {
      const manager = q.get('fieldManager');
      if (!manager) throw new HttpError(422, 'Invalid', 'fieldManager is required for apply patch');
      const applied = patch as Obj;
      const appliedKey = `${k}${statusOnly ? '/status' : ''}|${manager}`;
      const write: Write = { manager, operation: 'Apply', applied };
      if (!cur) {
        if (statusOnly) throw new HttpError(404, 'NotFound', `${r.plural} "${name}" not found`);
        const created = this.createObject(r, namespace, { ...applied, metadata: { ...applied.metadata, name } }, write);
        this.applied.set(appliedKey, applied);
        return created;
      }
      if (applied.metadata?.resourceVersion && applied.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${r.plural} "${name}": the object has been modified`);
      }
      if (q.get('force') !== 'true') {
        const conflicts = this.fields.conflicts(k, manager, applied, cur, statusOnly);
        if (conflicts.length) {
          throw new HttpError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${conflicts.map((c) => `conflict with "${c.manager}": ${c.path}`).join('; ')}`);
        }
      }
      const base = structuredClone(cur) as Record<string, unknown>;
      const previous = this.applied.get(appliedKey);
      // A field another manager applied too stays when this one stops sending it (shared ownership).
      const others = [...this.applied].filter(([key]) => key.startsWith(`${k}${statusOnly ? '/status' : ''}|`) && key !== appliedKey).map(([, v]) => v);
      if (previous !== undefined) removeDropped(base, previous, applied, others);
      const next = deepMerge(base, stripRv(applied)) as Obj;
      const out = this.update(r, cur, next, statusOnly, 'apply', write);
      this.applied.set(appliedKey, applied);
      return out;
    }
    if (!cur) throw new HttpError(404, 'NotFound', `${r.plural}.${r.group || 'core'} "${name}" not found`);
    if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
      const p = patch as Obj;
      if (p?.metadata?.resourceVersion && p.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${r.plural} "${name}": the object has been modified`);
      }
      return this.update(r, cur, mergePatch(structuredClone(cur), patch) as Obj, statusOnly, 'patch', { manager: q.get('fieldManager') ?? 'unknown', operation: 'Update' });
    }
    throw new HttpError(415, 'UnsupportedMediaType', `patch type ${type} is not supported here`);
  }

  private deleteObject(r: Resource, namespace: string | undefined, name: string): unknown {
    const cur = this.mustGet(r, namespace, name);
    if ((cur.metadata.finalizers ?? []).length > 0) {
      if (cur.metadata.deletionTimestamp) return cur;
      const next = structuredClone(cur);
      next.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      return this.commit(r, next, 'MODIFIED', `mark-deleted ${r.kind}/${namespace ?? ''}/${name}`);
    }
    this.store.delete(this.key(r, cur.metadata.namespace, name));
    this.fields.forget(this.key(r, cur.metadata.namespace, name));
    this.rv += 1;
    const gone = { ...structuredClone(cur), metadata: { ...cur.metadata, resourceVersion: String(this.rv) } };
    this.writes.push(`delete ${r.kind}/${namespace ?? ''}/${name}`);
    this.emit(r, { rv: this.rv, type: 'DELETED', object: gone });
    this.collectGarbage(cur.metadata.uid!);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: r.plural, uid: cur.metadata.uid } };
  }

  /** Background cascading deletion: everything whose ownerReferences name the uid. */
  private collectGarbage(uid: string): void {
    for (const r of RESOURCES) {
      for (const o of this.items(r, undefined)) {
        if (o.metadata.ownerReferences?.some((ref) => ref.uid === uid)) this.deleteObject(r, o.metadata.namespace, o.metadata.name);
      }
    }
  }

  /**
   * The garbage collector's other half: an object created with owner references none of which
   * names an existing object (a controller acting on a stale cache) is deleted in the background.
   */
  private collectIfOrphaned(r: Resource, obj: Obj): void {
    setTimeout(() => {
      const cur = this.store.get(this.key(r, obj.metadata.namespace, obj.metadata.name));
      if (!cur || cur.metadata.uid !== obj.metadata.uid) return;
      const uids = new Set([...this.store.values()].map((o) => o.metadata.uid));
      if ((cur.metadata.ownerReferences ?? []).some((ref) => uids.has(ref.uid))) return;
      this.deleteObject(r, cur.metadata.namespace, cur.metadata.name);
    }, this.opts.rolloutDelayMs ?? 20).unref();
  }

  private simulateRollout(r: Resource, obj: Obj): void {
    const gen = obj.metadata.generation ?? 1;
    const status = obj.status as { observedGeneration?: number } | undefined;
    if ((status?.observedGeneration ?? 0) >= gen) return;
    setTimeout(() => {
      if (this.holdRollouts) return;
      const cur = this.store.get(this.key(r, obj.metadata.namespace, obj.metadata.name));
      if (!cur || cur.metadata.generation !== gen) return;
      const replicas = ((cur.spec as { replicas?: number }).replicas ?? 1);
      this.commit(
        r,
        {
          ...structuredClone(cur),
          status: {
            observedGeneration: gen,
            replicas,
            updatedReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }],
          },
        },
        'MODIFIED',
        `rollout Deployment/${cur.metadata.namespace}/${cur.metadata.name}`,
      );
      if (this.opts.pods) this.syncPods(cur);
    }, this.opts.rolloutDelayMs ?? 20).unref();
  }

  /**
   * The ReplicaSet controller and the kubelet, reduced to pod counts: one Pod per replica, named
   * and labelled from the template; a pod scaled away is Terminating (deletionTimestamp) until
   * onPodTerminating resolves, then deleted.
   */
  private syncPods(dep: Obj): void {
    const podR = this.byKind('Pod');
    const ns = dep.metadata.namespace;
    const template = (dep.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template;
    const mine = this.items(podR, ns).filter((p) => p.metadata.ownerReferences?.some((o) => o.uid === dep.metadata.uid));
    const live = mine.filter((p) => !p.metadata.deletionTimestamp);
    const want = (dep.spec as { replicas?: number }).replicas ?? 1;
    for (let i = live.length; i < want; i++) {
      const name = `${dep.metadata.name}-5d8f7c9b6-${randomUUID().slice(0, 5)}`;
      this.createObject(podR, ns, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { ...template?.metadata?.labels }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: dep.metadata.name, uid: dep.metadata.uid!, controller: true } as never] }, spec: {} });
    }
    for (const pod of live.slice(want)) {
      const terminating = { ...structuredClone(pod), metadata: { ...pod.metadata, deletionTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') } };
      this.commit(podR, terminating, 'MODIFIED', `terminate Pod/${ns}/${pod.metadata.name}`);
      void (this.onPodTerminating?.(terminating) ?? Promise.resolve()).finally(() => {
        if (this.store.has(this.key(podR, ns, pod.metadata.name))) this.deleteObject(podR, ns, pod.metadata.name);
      });
    }
  }

  /**
   * The HPA controller, reduced to its bounds: a Deployment an HPA targets is scaled into
   * [minReplicas, maxReplicas] through its replicas field (no metrics, so no further scaling).
   */
  private simulateAutoscaler(namespace: string | undefined, deployment: string): void {
    setTimeout(() => {
      const hpaR = this.byKind('HorizontalPodAutoscaler');
      const depR = this.byKind('Deployment');
      const hpa = this.items(hpaR, namespace).find((h) => (h.spec as { scaleTargetRef?: { name?: string } }).scaleTargetRef?.name === deployment);
      const dep = this.store.get(this.key(depR, namespace, deployment));
      if (!hpa || !dep) return;
      const { minReplicas = 1, maxReplicas } = hpa.spec as { minReplicas?: number; maxReplicas: number };
      const cur = (dep.spec as { replicas?: number }).replicas ?? 1;
      const want = Math.min(maxReplicas, Math.max(minReplicas, cur));
      if (want === cur) return;
      const next = structuredClone(dep);
      next.spec = { ...(next.spec as object), replicas: want };
      next.metadata.generation = (dep.metadata.generation ?? 1) + 1;
      this.commit(depR, next, 'MODIFIED', `scale Deployment/${namespace}/${deployment}`);
    }, this.opts.rolloutDelayMs ?? 20).unref();
  }

  /** Lets held rollouts finish: every Deployment's status catches up with its spec. */
  releaseRollouts(): void {
    this.holdRollouts = false;
    const r = this.byKind('Deployment');
    for (const o of this.items(r, undefined)) this.simulateRollout(r, o);
  }

  // ---- watch ----

  private emit(r: Resource, ev: Event): void {
    const k = `${gv(r)}/${r.plural}`;
    let list = this.events.get(k);
    if (!list) this.events.set(k, (list = []));
    list.push(ev);
    if (list.length > 2000) list.splice(0, list.length - 2000);
    if (this.idleWatches) return;
    for (const w of this.watchers) if (w.resource === r) this.deliver(w, ev);
  }

  private deliver(w: Watcher, ev: Event): void {
    const o = ev.object;
    if (w.namespace && r(w).namespaced && o.metadata.namespace !== w.namespace) return;
    if (w.name && o.metadata.name !== w.name) return;
    if (!matches(o, w.labelSelector, undefined)) return;
    w.res.write(`${JSON.stringify({ type: ev.type, object: o })}\n`);
    function r(x: Watcher) {
      return x.resource;
    }
  }

  private watch(r: Resource, namespace: string | undefined, q: URLSearchParams, res: http.ServerResponse): void {
    const field = parseFieldSelector(q.get('fieldSelector') ?? undefined);
    const w: Watcher = { resource: r, namespace: field.namespace ?? namespace, name: field.name, labelSelector: q.get('labelSelector') ?? undefined, bookmarks: q.get('allowWatchBookmarks') === 'true', res };
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const fromRaw = q.get('resourceVersion');
    if (q.get('sendInitialEvents') === 'true') {
      // Streaming list (KEP-3157, what kubectl 1.35 uses): the current state as ADDED events,
      // then a bookmark annotated k8s.io/initial-events-end, then live events.
      for (const o of this.items(r, w.namespace)) this.deliver(w, { rv: this.rv, type: 'ADDED', object: o });
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: r.kind, apiVersion: gv(r), metadata: { resourceVersion: String(this.rv), annotations: { 'k8s.io/initial-events-end': 'true' } } } })}\n`);
    } else if (!fromRaw || fromRaw === '0') {
      for (const o of this.items(r, w.namespace)) this.deliver(w, { rv: this.rv, type: 'ADDED', object: o });
    } else {
      const from = Number(fromRaw);
      if (!Number.isFinite(from) || from < this.compactedThrough) {
        res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${fromRaw} (${this.compactedThrough})`, reason: 'Expired', code: 410 } })}\n`);
        return;
      }
      for (const ev of this.events.get(`${gv(r)}/${r.plural}`) ?? []) if (ev.rv > from) this.deliver(w, ev);
    }
    this.watchers.add(w);
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      clearTimeout(timer);
      this.watchers.delete(w);
    });
  }

  private sendBookmarks(): void {
    if (this.idleWatches) return;
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: w.resource.kind, apiVersion: gv(w.resource), metadata: { resourceVersion: String(this.rv) } } })}\n`);
    }
    this.bookmarkRounds += 1;
  }
}

// ---- helpers ----

/** Who writes, for field ownership: an apply owns what it sent, an update what it changed. */
interface Write {
  manager: string;
  operation: 'Apply' | 'Update';
  applied?: unknown;
}

/** Drops what a structural schema does not declare (x-kubernetes-preserve-unknown-fields keeps it). */
function prune(schema: Schema, value: unknown): unknown {
  if (schema['x-kubernetes-preserve-unknown-fields']) return value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => prune(schema.items!, v)) : value;
  if (!isMap(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : schema.additionalProperties === true ? {} : undefined);
    if (sub) out[k] = prune(sub, v);
  }
  return out;
}

/** Object names as the API server checks them: Services are DNS-1035 labels, the rest DNS-1123 subdomains. */
function checkName(r: Resource, name: string): void {
  if (r.kind === 'Service' && (name.length > 63 || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name))) {
    throw new HttpError(422, 'Invalid', `Service "${name}" is invalid: metadata.name: Invalid value: "${name}": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`);
  }
  if (name.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)) {
    throw new HttpError(422, 'Invalid', `${r.kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`);
  }
}

/** A value at a simple JSON path such as .spec.replicas. */
function atPath(o: unknown, p: string): unknown {
  return p.replace(/^\./, '').split('.').reduce<unknown>((cur, k) => (isMap(cur) ? cur[k] : undefined), o);
}

function setPath(o: Record<string, unknown>, p: string, value: unknown): void {
  const keys = p.replace(/^\./, '').split('.');
  let cur = o;
  for (const k of keys.slice(0, -1)) cur = (isMap(cur[k]) ? cur[k] : (cur[k] = {})) as Record<string, unknown>;
  cur[keys.at(-1)!] = value;
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  if (res.headersSent) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
  res.end(text);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parse(body: string, contentType: string | undefined): unknown {
  if (!body) return {};
  try {
    // YAML is a superset of JSON: apply patches may come as either.
    return contentType?.includes('yaml') ? YAML.parse(body) : JSON.parse(body);
  } catch (err) {
    throw new HttpError(400, 'BadRequest', `cannot decode body: ${(err as Error).message}`);
  }
}

function withoutMetaStatus(o: Obj): unknown {
  return Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'metadata' && k !== 'status'));
}

function stripRv(o: Obj): Obj {
  const copy = structuredClone(o);
  if (copy.metadata) delete copy.metadata.resourceVersion;
  return copy;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const out: Record<string, unknown> = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Server-side apply's merge, simplified: maps merge recursively, everything else replaces. */
function deepMerge(base: unknown, applied: unknown): unknown {
  if (!isMap(base) || !isMap(applied)) return structuredClone(applied);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(applied)) out[k] = deepMerge(base[k], v);
  return out;
}

/**
 * Removes from target the leaves `previous` applied that `next` no longer applies, unless another
 * manager's applied configuration (`others`) still holds them.
 */
function removeDropped(target: Record<string, unknown>, previous: unknown, next: unknown, others: unknown[] = []): void {
  if (!isMap(previous)) return;
  for (const [k, v] of Object.entries(previous)) {
    const n = isMap(next) ? next[k] : undefined;
    const held = others.map((o) => (isMap(o) ? o[k] : undefined)).filter((o) => o !== undefined);
    if (n === undefined) {
      if (held.length === 0) delete target[k];
      else if (isMap(v) && isMap(target[k])) removeDropped(target[k] as Record<string, unknown>, v, {}, held);
    } else if (isMap(v) && isMap(n) && isMap(target[k])) removeDropped(target[k] as Record<string, unknown>, v, n, held);
  }
}

function applyDefaults(schema: { properties?: Record<string, unknown>; default?: unknown; items?: unknown }, value: unknown): unknown {
  if (!isMap(value) || !schema.properties) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [k, sub] of Object.entries(schema.properties) as [string, { default?: unknown; properties?: Record<string, unknown> }][]) {
    if (out[k] === undefined && sub.default !== undefined) out[k] = structuredClone(sub.default);
    if (out[k] !== undefined) out[k] = applyDefaults(sub, out[k]);
  }
  return out;
}

function parseFieldSelector(sel: string | undefined): { name?: string; namespace?: string } {
  const out: { name?: string; namespace?: string } = {};
  for (const part of (sel ?? '').split(',').filter(Boolean)) {
    const [k, v] = part.split(/==?/);
    if (k === 'metadata.name') out.name = v;
    else if (k === 'metadata.namespace') out.namespace = v;
    else throw new HttpError(400, 'BadRequest', `field label not supported: ${k}`);
  }
  return out;
}

function matches(o: Obj, labelSelector: string | undefined, fieldSelector: string | undefined): boolean {
  const f = parseFieldSelector(fieldSelector);
  if (f.name && o.metadata.name !== f.name) return false;
  if (f.namespace && o.metadata.namespace !== f.namespace) return false;
  const labels = o.metadata.labels ?? {};
  for (const term of (labelSelector ?? '').split(',').filter(Boolean)) {
    const ne = term.split('!=');
    if (ne.length === 2) {
      if (labels[ne[0]!.trim()] === ne[1]!.trim()) return false;
      continue;
    }
    const eq = term.split(/==?/);
    if (eq.length === 2) {
      if (labels[eq[0]!.trim()] !== eq[1]!.trim()) return false;
    } else if (!(term.trim() in labels)) return false;
  }
  return true;
}

/** Dates as kubectl shows ages (the API server's Table conversion does this server-side). */
function age(iso: string | undefined): string {
  if (!iso) return '<unknown>';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 3600 * 3) return `${Math.floor(s / 60)}m`;
  if (s < 86400 * 2) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** The JSONPath subset printer columns use: .a.b and .list[?(@.k=="v")].field */
function jsonPath(o: unknown, path: string): string | undefined {
  let cur: unknown = o;
  for (const seg of path.replace(/^\./, '').match(/[^.[\]]+|\[\?\(@\.[^)]+\)\]/g) ?? []) {
    const filter = /^\[\?\(@\.([\w-]+)=="([^"]*)"\)\]$/.exec(seg);
    if (filter) {
      cur = Array.isArray(cur) ? cur.find((x) => isMap(x) && x[filter[1]!] === filter[2]) : undefined;
    } else {
      cur = isMap(cur) ? cur[seg] : undefined;
    }
    if (cur === undefined) return undefined;
  }
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}
