// RBAC as the API server's authorizer evaluates it, for the stand-in API server: Roles and
// ClusterRoles with the RoleBindings and ClusterRoleBindings that grant them, fed with what
// `helm template` renders, so a request the chart does not grant is a 403 in tests (least
// privilege tested, not claimed). Modelled: apiGroups, resources with subresources
// ("deployments/scale"), verbs, resourceNames (which never grant list, watch or create, as in
// Kubernetes), "*" wildcards, ServiceAccount, User and Group subjects
// (system:serviceaccounts[:<ns>], system:authenticated). Not modelled: aggregated ClusterRoles,
// nonResourceURLs (discovery is open to every authenticated user, as system:discovery makes it).

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

export interface Attributes {
  user: string;
  groups: string[];
  verb: string;
  group: string;
  /** plural, or plural/subresource */
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
}

export class Rbac {
  private readonly roles = new Map<string, Rule[]>();
  private readonly clusterRoles = new Map<string, Rule[]>();
  private readonly bindings: RbacObject[] = [];
  private readonly clusterBindings: RbacObject[] = [];

  /** Takes every RBAC object among `objects` (anything else is ignored). */
  load(objects: unknown[]): void {
    for (const o of objects as RbacObject[]) {
      if (!o || typeof o !== 'object') continue;
      if (o.kind === 'Role') this.roles.set(`${o.metadata.namespace}/${o.metadata.name}`, o.rules ?? []);
      else if (o.kind === 'ClusterRole') this.clusterRoles.set(o.metadata.name, o.rules ?? []);
      else if (o.kind === 'RoleBinding') this.bindings.push(o);
      else if (o.kind === 'ClusterRoleBinding') this.clusterBindings.push(o);
    }
  }

  allows(a: Attributes): boolean {
    const rules: Rule[] = [];
    for (const b of this.clusterBindings) if (this.bound(b, a)) rules.push(...(this.clusterRoles.get(b.roleRef!.name) ?? []));
    if (a.namespace) {
      for (const b of this.bindings) {
        if (b.metadata.namespace !== a.namespace || !this.bound(b, a)) continue;
        rules.push(...((b.roleRef!.kind === 'ClusterRole' ? this.clusterRoles.get(b.roleRef!.name) : this.roles.get(`${a.namespace}/${b.roleRef!.name}`)) ?? []));
      }
    }
    return rules.some((r) => grants(r, a));
  }

  private bound(b: RbacObject, a: Attributes): boolean {
    return (b.subjects ?? []).some((s) => {
      if (s.kind === 'ServiceAccount') return a.user === `system:serviceaccount:${s.namespace ?? b.metadata.namespace}:${s.name}`;
      if (s.kind === 'User') return a.user === s.name;
      return s.kind === 'Group' && a.groups.includes(s.name);
    });
  }
}

function grants(r: Rule, a: Attributes): boolean {
  const any = (list: string[] | undefined, v: string) => (list ?? []).includes('*') || (list ?? []).includes(v);
  if (!any(r.verbs, a.verb) || !any(r.apiGroups, a.group) || !any(r.resources, a.resource)) return false;
  if (!r.resourceNames?.length) return true;
  // Names restrict a rule to requests for one object: never a list, a watch or a create.
  return a.name !== undefined && !['list', 'watch', 'create', 'deletecollection'].includes(a.verb) && r.resourceNames.includes(a.name);
}

/** The message kube-apiserver's authorizer gives. */
export function forbiddenMessage(a: Attributes): string {
  const [plural, sub] = a.resource.split('/');
  const what = `${plural}${a.group ? `.${a.group}` : ''}${a.name ? ` "${a.name}"` : ''}`;
  return `${what} is forbidden: User "${a.user}" cannot ${a.verb} resource "${plural}"${sub ? ` (subresource "${sub}")` : ''} in API group "${a.group}"${a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope'}`;
}
