// Validates built-in Kubernetes objects (Deployment, Service, RBAC, ...) against the upstream
// OpenAPI schemas that kubernetes-models compiles (Kubernetes 1.3x), the same shapes the API
// server decodes. Used on builder output and on every object helm renders.

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: unknown) => Validatable;

/** apiVersion "group/version" → the kubernetes-models module path. */
function modulePath(apiVersion: string): string {
  return apiVersion.includes('/') ? `kubernetes-models/${apiVersion}` : `kubernetes-models/v1`;
}

/**
 * Throws with the schema errors if the object does not match its kind's schema. Returns false
 * (without throwing) for kinds kubernetes-models does not know (custom resources), so callers can
 * check those against their own CRD instead.
 */
export async function validateBuiltin(obj: { apiVersion?: string; kind?: string }): Promise<boolean> {
  if (!obj.apiVersion || !obj.kind) throw new Error(`object without apiVersion/kind: ${JSON.stringify(obj).slice(0, 200)}`);
  let mod: Record<string, ModelClass>;
  try {
    mod = (await import(/* @vite-ignore */ modulePath(obj.apiVersion))) as Record<string, ModelClass>;
  } catch {
    return false;
  }
  const Model = mod[obj.kind];
  if (!Model) return false;
  new Model(obj).validate();
  return true;
}
