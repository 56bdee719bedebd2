// JSON shapes the public HTTP API answers (/v1/catalog, the dashboard's /api), declared once: the
// server builds them and web/ reads them (type-only imports; this file imports nothing).

/** The chains a plan or pack can be paid on (PAYMENT_CHAINS, server/config.ts). */
export const PAYMENT_CHAIN_NAMES = ['ethereum', 'base', 'polygon', 'bsc', 'solana'] as const;
export type PaymentChainName = (typeof PAYMENT_CHAIN_NAMES)[number];

/** A plan as the catalog and the dashboard show it. */
export interface Plan {
  name: string;
  display_name: string;
  credits: number;
  renewal: 'one-time' | 'monthly';
  requests_per_minute: number;
  burst: number;
  servers: string[];
  max_keys: number;
  /** Monthly price in integer USD cents; null: not for sale (free, or assigned by the operator). */
  price_cents: number | null;
}

/** Requests the gateway logged, split by how they were answered: ok, failed, rate-limited (429). */
export interface Outcomes {
  requests: number;
  ok: number;
  errors: number;
  rate_limited: number;
  credits: number;
}

/** GET /api/usage/breakdown. */
export interface UsageBreakdown {
  from: string;
  to: string;
  days: number;
  /** The first day the request log still holds (retention); days before it have no rows. */
  retained_from: string;
  key: string | null;
  daily: (Outcomes & { day: string })[];
  by_key: (Outcomes & { key_id: string | null })[];
  /** tool is null for requests other than tools/call (listing, discovery) and for refusals before one was named. */
  by_tool: (Outcomes & { server: string; method: string; tool: string | null })[];
  by_error: { error_code: string; status: number; requests: number }[];
}

/** One purchase on the account (GET /api/purchases): a plan or pack paid on chain, or an x402 call. */
export interface PurchaseJson {
  id: string;
  kind: 'plan' | 'pack';
  item: string | null;
  credits: number;
  price_cents: number;
  chain: string;
  tx_hash: string;
  payer: string;
  token: string;
  /** Token base units, as a decimal string. */
  amount: string;
  /** The amount in whole tokens ("29.00"). */
  amount_display: string;
  order_id: string | null;
  /** The seller's wallet the transfer paid (the order's treasury); null if the order is gone. */
  treasury: string | null;
  /** The plan's display name or the pack's credits, as a person reads the item. */
  item_display: string;
  created_at: string;
}

/** One request in the account's request log (GET /api/requests), newest first. */
export interface RequestLogRowJson {
  id: number;
  account_id: string;
  key_id: string | null;
  request_id: string;
  server: string;
  /** JSON-RPC method, e.g. tools/call, tools/list, initialize. */
  method: string;
  tool: string | null;
  /** HTTP status of the answer. */
  status: number;
  /** DESIGN.md §3 error code, null on success. */
  error_code: string | null;
  /** The error's message as the client got it (for bad arguments, with the first issue); null on success. */
  message: string | null;
  /** Bytes of the tools/call arguments (JSON), when the body named a tool. */
  args_bytes: number | null;
  /** Credits charged in the end (0 when refunded). */
  credits: number;
  latency_ms: number;
  /** ISO 8601. */
  created_at: string;
}

/**
 * An order (POST /api/orders, GET /api/orders/{id}): what is bought, and exactly what to send
 * where before it expires (amounts in token base units).
 */
/**
 * What buying an item would do, answered before anything is paid (GET /api/orders/quote, and
 * beside every new order). Plans follow one rule, "nothing already paid is cut short": with no paid
 * time left the plan starts now ('starts_now'); buying the plan already paid last adds a month
 * after it ('extends'); buying another plan while one is paid starts it when that paid time ends
 * ('scheduled'). A pack's credits are added now ('adds_topup').
 */
export interface QuoteJson {
  kind: 'plan' | 'pack';
  item: string;
  /** The plan's display name, or the pack's credits in words. */
  item_display: string;
  price_cents: number;
  credits: number;
  rule: 'starts_now' | 'extends' | 'scheduled' | 'adds_topup';
  /** When what is bought takes effect, and (plans) when its paid month ends. */
  starts_at: string;
  ends_at: string | null;
  current: {
    plan: string;
    plan_display: string;
    balance: number;
    topup: number;
    /** The end of the current plan's paid time; null when it is not paid on chain. */
    paid_until: string | null;
    /** The end of all paid time, scheduled plans included. */
    paid_through: string | null;
    /** USD cents: the share of paid plan time not used yet (current and scheduled). Kept in full. */
    remaining_value_cents: number;
    scheduled: { plan: string; plan_display: string; starts_at: string; ends_at: string }[];
  };
  /** The rule and its numbers in one sentence, as the Plans page shows it. */
  summary: string;
}

export interface OrderJson {
  id: string;
  kind: 'plan' | 'pack';
  item: string;
  credits: number;
  price_cents: number;
  chain: PaymentChainName;
  token: string;
  decimals: number;
  /** Token base units, as a decimal string. */
  amount: string;
  /** The amount in whole tokens ("29.00"). */
  amount_display: string;
  treasury: string;
  status: 'pending' | 'submitted' | 'paid' | 'expired';
  tx_hash: string | null;
  /** Why the last verification of the submitted transaction failed, if it did. */
  last_error: string | null;
  created_at: string;
  expires_at: string;
  paid_at: string | null;
}

/**
 * The Usage page's outlook (GET /api/usage `outlook`): the period's spend in dollars at the
 * plan's price, when the balance runs out at the recent rate, the usage threshold reached, and
 * whether a paid plan is about to lapse to Free (it never renews by itself).
 */
export interface UsageOutlookJson {
  plan_display: string;
  /** The plan's monthly price in USD cents; null for a plan not sold (Free). */
  price_cents: number | null;
  /** This period's credits used, in USD cents at the plan's price per credit; null without a price. */
  spend_cents: number | null;
  /** Top-up credits in the balance (spent after the plan's allowance, kept at renewal). */
  topup: number;
  /** The end of the paid plan time; null on Free. */
  paid_until: string | null;
  /** When the account falls back to Free (paid_until with nothing bought after it); null otherwise. */
  lapses_at: string | null;
  /** True from LAPSE_NOTICE_DAYS before lapses_at. */
  lapse_soon: boolean;
  /** A plan bought to start when the paid time ends. */
  next_plan: { plan_display: string; starts_at: string } | null;
  /** Credits per day over the last 7 days (or since the period began, if later). */
  rate_per_day: number;
  /** When the balance reaches 0 at that rate; null when nothing is being spent. */
  runs_out_at: string | null;
  /** True when runs_out_at comes before the balance resets (renewal) or the plan ends. */
  runs_out_first: boolean;
  /** Share of the period's allowance used, 0-100+ (whole percent, rounded down). */
  used_percent: number;
  /** The highest of 80, 90, 100 reached this period, or null. */
  threshold: number | null;
  /** The instant these figures were computed (the as-of time of every number above). */
  as_of: string;
}
