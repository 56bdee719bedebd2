// Who may write an object: the answer that keeps two installations in one cluster from fighting.
// Each operator stamps the children it manages with its instance (`<namespace>/<Deployment>`);
// an object another instance stamped, one another owner controls, or one created outside the
// operator is refused, never taken over. Pure, so the rules are unit-tested.
import type { KubernetesObject } from '@kubernetes/client-node';

/** The annotation naming the operator installation that manages an object. */
export const OPERATOR_ANNOTATION = 'cryptomcp.dev/operator';

export interface Foreign {
  /** Another operator installation manages it (its name), or undefined for any other holder. */
  operator?: string;
  /** Who holds it, for the Event and the condition. */
  holder: string;
}

/**
 * Whether an existing child is someone else's to write: stamped by another instance, controlled
 * by another owner, or with no controller at all (created by hand or by another tool; its field
 * managers say who). Undefined when it is absent or this MCPServer's under this instance — a
 * child made before the stamp existed (controlled by this MCPServer, no stamp) counts as ours.
 */
export function foreignHolder(existing: KubernetesObject | undefined, ownerUid: string | undefined, instance: string): Foreign | undefined {
  if (!existing) return undefined;
  const stamped = existing.metadata?.annotations?.[OPERATOR_ANNOTATION];
  if (stamped && stamped !== instance) return { operator: stamped, holder: `operator ${stamped}` };
  const controller = existing.metadata?.ownerReferences?.find((r) => r.controller);
  if (controller && controller.uid !== ownerUid) return { holder: `${controller.kind} ${controller.name} (uid ${controller.uid})` };
  if (!controller && !stamped) {
    const managers = [...new Set((existing.metadata?.managedFields ?? []).map((f) => f.manager).filter(Boolean))];
    return { holder: managers.length ? `field manager ${managers.join(', ')}` : 'nobody the operator knows (created outside it)' };
  }
  return undefined;
}

/** Whether a custom resource is claimed by another instance (the annotation on the resource itself). */
export function claimedByOther(obj: { metadata?: { annotations?: Record<string, string> } }, instance: string): string | undefined {
  const claim = obj.metadata?.annotations?.[OPERATOR_ANNOTATION];
  return claim && claim !== instance ? claim : undefined;
}
