// Field ownership for the stand-in API server's server-side apply: which manager owns which
// field, kept per object and shown as metadata.managedFields (FieldsV1), and the conflicts an
// apply without force gets. Simplified: maps are owned leaf by leaf, every list as a whole (the
// API server merges keyed lists such as containers item by item; a list here conflicts sooner,
// never later).

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Metadata the API server keeps for itself: no manager owns it. */
const SYSTEM_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields', 'selfLink']);

/** Owned paths of an object (or an applied configuration): ".spec.replicas", ".metadata.labels.app", ... */
export function leafPaths(obj: unknown, statusOnly: boolean): string[] {
  const out: string[] = [];
  const walk = (v: unknown, at: string) => {
    if (isMap(v) && Object.keys(v).length > 0) for (const [k, sub] of Object.entries(v)) walk(sub, `${at}.${k}`);
    else out.push(at);
  };
  if (!isMap(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if ((k === 'status') !== statusOnly) continue;
    if (k === 'metadata' && isMap(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!SYSTEM_META.has(mk)) walk(mv, `.metadata.${mk}`);
    } else walk(v, `.${k}`);
  }
  return out;
}

export function valueAt(obj: unknown, path: string): unknown {
  return path
    .slice(1)
    .split('.')
    .reduce<unknown>((cur, k) => (isMap(cur) ? cur[k] : undefined), obj);
}

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  time: string;
  paths: Set<string>;
}

export class FieldOwners {
  /** object key → manager (and subresource) → what it owns */
  private readonly owners = new Map<string, Map<string, Entry>>();

  forget(key: string): void {
    this.owners.delete(key);
  }

  /**
   * The fields of `applied` another manager owns with a different value in `current`: each a
   * conflict for an apply without force.
   */
  conflicts(key: string, manager: string, applied: unknown, current: unknown, statusOnly: boolean): { manager: string; path: string }[] {
    const out: { manager: string; path: string }[] = [];
    const entries = this.owners.get(key);
    if (!entries) return out;
    for (const path of leafPaths(applied, statusOnly)) {
      if (JSON.stringify(valueAt(applied, path)) === JSON.stringify(valueAt(current, path))) continue;
      for (const e of entries.values()) {
        if (e.manager === manager || (e.subresource === 'status') !== statusOnly) continue;
        if ([...e.paths].some((p) => p === path || p.startsWith(`${path}.`) || path.startsWith(`${p}.`))) out.push({ manager: e.manager, path });
      }
    }
    return out;
  }

  /**
   * Records a write: an apply owns exactly what it sent (taking it from others, as force does);
   * an update owns what it changed (or everything, when it created the object).
   */
  record(key: string, manager: string, operation: 'Apply' | 'Update', apiVersion: string, statusOnly: boolean, before: unknown, after: unknown, applied?: unknown): void {
    let entries = this.owners.get(key);
    if (!entries) this.owners.set(key, (entries = new Map()));
    const paths = operation === 'Apply' ? leafPaths(applied, statusOnly) : leafPaths(after, statusOnly).filter((p) => before === undefined || JSON.stringify(valueAt(before, p)) !== JSON.stringify(valueAt(after, p)));
    if (operation === 'Update' && paths.length === 0) return;
    const taken = new Set(paths);
    const id = `${manager}|${operation}${statusOnly ? '|status' : ''}`;
    for (const [m, e] of entries) {
      if (m === id || (e.subresource === 'status') !== statusOnly) continue;
      for (const p of [...e.paths]) if (taken.has(p) || [...taken].some((t) => p.startsWith(`${t}.`) || t.startsWith(`${p}.`))) e.paths.delete(p);
      if (e.paths.size === 0) entries.delete(m);
    }
    const mine = operation === 'Update' ? entries.get(id) : undefined;
    entries.set(id, { manager, operation, apiVersion, subresource: statusOnly ? 'status' : undefined, time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), paths: new Set([...(mine?.paths ?? []), ...paths]) });
  }

  /** metadata.managedFields as the API server shows it. */
  managedFields(key: string): unknown[] {
    return [...(this.owners.get(key)?.values() ?? [])].map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1(e.paths),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
  }
}

function fieldsV1(paths: Set<string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let cur = root;
    for (const k of p.slice(1).split('.')) cur = (cur[`f:${k}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}
