// The operator's one door to the Kubernetes API, over @kubernetes/client-node (the only module
// in the repository that imports it). Everything the reconcilers and the informers need, and
// nothing else: list, watch, get, server-side apply, merge patches (status, finalizers), delete,
// and Leases for leader election. Errors keep the HTTP status in `code`.
import {
  ApiException,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/types.ts';

/** Objects per list request. */
export const LIST_PAGE = 500;

export interface ResourceType {
  apiVersion: string;
  kind: string;
  /** Lower-case plural as in the URL. */
  plural: string;
  namespaced: boolean;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubernetesObject & { code?: number; reason?: string; message?: string };
}

export class KubeError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** The HTTP status of a client-node or watch error (0 when the request never got an answer). */
export function statusOf(err: unknown): number {
  if (err instanceof KubeError) return err.code;
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown })?.statusCode ?? (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : 0;
}

function wrap(err: unknown): never {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not JSON: keep the raw body
    }
    throw new KubeError(err.code, message);
  }
  throw err;
}

function split(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export function collectionPath(t: ResourceType, namespace: string | undefined): string {
  const { group, version } = split(t.apiVersion);
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${base}${t.namespaced && namespace ? `/namespaces/${namespace}` : ''}/${t.plural}`;
}

/** Objects come back as plain JSON (no model classes), the same shape the watch delivers. */
export class KubeClient {
  private readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly watcher: Watch;

  constructor(kc: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.watcher = new Watch(kc);
  }

  /**
   * Every object, in pages of LIST_PAGE (as client-go's pager does: one huge response is memory
   * the API server and the operator both hold at once). The resourceVersion is the first page's:
   * every page is served from that one snapshot. A continue token that expired meanwhile (410)
   * starts the list over.
   */
  async list<T extends KubernetesObject>(t: ResourceType, namespace?: string, labelSelector?: string): Promise<{ items: T[]; resourceVersion: string }> {
    for (let attempt = 0; ; attempt++) {
      const items: T[] = [];
      let resourceVersion = '';
      let token: string | undefined;
      try {
        do {
          const page = await this.objects.list<T>(t.apiVersion, t.kind, t.namespaced ? namespace : undefined, undefined, undefined, undefined, undefined, labelSelector, LIST_PAGE, token).catch(wrap);
          for (const o of page.items) items.push(plain({ ...o, apiVersion: t.apiVersion, kind: t.kind }));
          if (!token) resourceVersion = page.metadata?.resourceVersion ?? '';
          token = page.metadata?._continue || undefined;
        } while (token);
      } catch (err) {
        if (statusOf(err) === 410 && token && attempt < 2) continue;
        throw err;
      }
      return { items, resourceVersion };
    }
  }

  /**
   * Opens a watch from resourceVersion with bookmarks. `onEvent` sees every line; `onDone`
   * fires once when the stream ends for any reason (null: closed by the server). Returns a
   * function that aborts the stream.
   */
  async watch(t: ResourceType, namespace: string | undefined, resourceVersion: string, onEvent: (ev: WatchEvent) => void, onDone: (err: unknown) => void, labelSelector?: string): Promise<() => void> {
    const controller = await this.watcher.watch(
      collectionPath(t, namespace),
      { resourceVersion, allowWatchBookmarks: true, labelSelector },
      (type: string, object: unknown) => onEvent({ type: type as WatchEvent['type'], object: object as WatchEvent['object'] }),
      onDone,
    );
    return () => controller.abort();
  }

  async get<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<T | undefined> {
    try {
      return plain(await this.objects.read<T>({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }));
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      return wrap(err);
    }
  }

  /**
   * Server-side apply with the operator's field manager (or another, for a handoff), taking
   * ownership of every field it sends.
   */
  async apply<T extends KubernetesObject>(obj: T, fieldManager: string = FIELD_MANAGER): Promise<T> {
    return plain(await this.objects.patch<T>(obj, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply).catch(wrap));
  }

  /** JSON merge patch of the object's main resource (metadata such as finalizers). */
  async mergePatch<T extends KubernetesObject>(obj: T): Promise<T> {
    return plain(await this.objects.patch<T>(obj, undefined, undefined, FIELD_MANAGER, undefined, PatchStrategy.MergePatch).catch(wrap));
  }

  /**
   * JSON merge patch of a custom resource's status subresource, on the resourceVersion the status
   * was computed from: a pass that read a stale cache (its own last write not seen yet) gets a
   * 409 and looks again, instead of writing an old view over a newer one.
   */
  async patchStatus(apiVersion: string, plural: string, namespace: string | undefined, name: string, status: unknown, resourceVersion?: string): Promise<void> {
    const { group, version } = split(apiVersion);
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const body = { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), status };
    if (namespace) {
      await this.custom.patchNamespacedCustomObjectStatus({ group, version, namespace, plural, name, body, fieldManager: FIELD_MANAGER }, options).catch(wrap);
    } else {
      await this.custom.patchClusterCustomObjectStatus({ group, version, plural, name, body, fieldManager: FIELD_MANAGER }, options).catch(wrap);
    }
  }

  /** Deletes; a 404 counts as done. */
  async delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void> {
    try {
      await this.objects.delete({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }, undefined, undefined, undefined, undefined, 'Background');
    } catch (err) {
      if (statusOf(err) === 404) return;
      wrap(err);
    }
  }

  async create<T extends KubernetesObject>(obj: T): Promise<T> {
    return plain(await this.objects.create<T>(obj, undefined, undefined, FIELD_MANAGER).catch(wrap));
  }

  /** PUT with the object's resourceVersion: 409 when someone wrote in between. */
  async replace<T extends KubernetesObject>(obj: T): Promise<T> {
    return plain(await this.objects.replace<T>(obj, undefined, undefined, FIELD_MANAGER).catch(wrap));
  }
}

/**
 * client-node turns known kinds into model classes (dates as Date objects); the reconcilers
 * compare and hash plain JSON, as the watch delivers it.
 */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
