// What the servers see of alerts (issue 33): the rule and alert shapes, the AlertStore interface
// their tools call, the evaluator contract each alerting server implements for its kind of rule,
// and the limits and prices. Outcomes a user causes (over the cap, a refused webhook URL, no such
// rule) are values; exceptions are for faults.

export type AlertKind = 'price' | 'whale' | 'social';

/**
 * Rules an account may hold, over all kinds, by plan. A plan the table does not name (one a
 * PlanPolicy added) gets the free plan's cap.
 */
export const ALERT_RULE_CAPS: Readonly<Record<string, number>> = { free: 3, basic: 20, pro: 100, premium: 500 };
export const alertRuleCap = (plan: string): number => ALERT_RULE_CAPS[plan] ?? ALERT_RULE_CAPS.free!;
export const ALERT_CAPS_TEXT = 'free 3, basic 20, pro 100, premium 500';

/** Credits one alert delivered by webhook costs (charged only when the receiver answered 2xx). */
export const ALERT_DELIVERY_CREDITS = 1;

export interface AlertRule {
  id: string;
  account_id: string;
  kind: AlertKind;
  /** The server whose tool created it (metering and usage name it). */
  server: string;
  params: Record<string, unknown>;
  /** Where the rule stands between evaluations (marks, last price, side of a level). */
  state: Record<string, unknown>;
  status: 'active' | 'paused';
  note: string | null;
  webhook: { id: number; url: string } | null;
  created_at: string;
  last_evaluated_at: string | null;
  last_error: string | null;
  fired: number;
  last_fired_at: string | null;
}

export interface Alert {
  /** The feed cursor: ids only grow, in the order alerts became visible. */
  id: number;
  rule_id: string | null;
  kind: AlertKind;
  /** With the rule id, the idempotency id: the same event of the same rule is stored once. */
  event_id: string;
  title: string;
  data: Record<string, unknown>;
  fired_at: string;
}

/** What an evaluator reports of an event that fires a rule. */
export interface FiredEvent {
  event_id: string;
  title: string;
  data: Record<string, unknown>;
}

export interface RuleOutcome {
  rule_id: string;
  fired: FiredEvent[];
  /** The rule's new state (stored whether or not anything fired). */
  state: Record<string, unknown>;
}

/**
 * Evaluates due rules of one kind in one pass (so rules on one chain share one scan). A rule the
 * evaluator cannot evaluate now (its provider failed) is left out, or reported with its error.
 */
export type RuleEvaluator = (rules: readonly AlertRule[], signal: AbortSignal) => Promise<(RuleOutcome | { rule_id: string; error: string })[]>;

export interface NewRule {
  kind: AlertKind;
  server: string;
  params: Record<string, unknown>;
  state: Record<string, unknown>;
  note: string | undefined;
  webhook_url: string | undefined;
}

export type RuleCreateOutcome =
  | { ok: true; rule: AlertRule; webhook: { id: number; url: string; created: boolean; secret: string | null } | null; limit: number }
  | { ok: false; code: 'CAP_REACHED'; limit: number; plan: string }
  | { ok: false; code: 'WEBHOOK_REFUSED'; reason: string };

export interface AlertStore {
  /** The webhook URL is checked (scheme, public address) before anything is written. */
  create(accountId: string, rule: NewRule): Promise<RuleCreateOutcome>;
  list(accountId: string, kind?: AlertKind): Promise<AlertRule[]>;
  /** False when the account has no such rule. */
  setStatus(accountId: string, ruleId: string, status: 'active' | 'paused'): Promise<AlertRule | null>;
  remove(accountId: string, ruleId: string): Promise<boolean>;
  /** Alerts after the cursor, oldest first, at most limit. */
  since(accountId: string, cursor: number, limit: number): Promise<Alert[]>;
  /** The cap of the account's plan and how many rules it holds. */
  usage(accountId: string): Promise<{ rules: number; limit: number; plan: string }>;
}
