// POST /x402/mcp/{server}: the nine servers for agents that have a wallet and no account (issue
// 21, DESIGN.md §5b). The keyed /mcp gateway's stages are reused — route, classify (row 5), the
// protocol answerer, run-tool and its success envelope — and the payment takes the place of the
// key and credit stages:
//   discovery, initialize, tools/list, ping: free (a per-client connect bucket);
//   tools/call, unpaid: 402 PAYMENT_REQUIRED with the x402 v2 PAYMENT-REQUIRED header
//     (price = the tool's credits × USD per credit, in the asset's base units; network, asset,
//     payTo, and the token's EIP-712 domain in `extra`);
//   every tools/call, free ones included: a per-client-address bucket (X402_ADDRESS_*), since
//     nothing else identifies an x402 caller before its payment is checked;
//   tools/call, paid (PAYMENT-SIGNATURE header, or params._meta["x402/payment"] per x402's MCP
//     binding): verify → rate limit per (verified) payer → run the tool → the delivery policy of
//     gateway/delivery.ts, the same as /mcp's: settled only when the answer exists and its client
//     is still there, never for a failed call, an answer with no data or a client gone → the
//     answer with the PAYMENT-RESPONSE header (and result._meta["x402/payment-response"]).
// A settlement that fails after the tool ran withholds the answer: 402 PAYMENT_INVALID, reason
// settlement_failed, nothing paid and nothing released. Tools bound to an account (usage,
// watchlists) are neither listed nor callable here: an x402 caller has no account.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { baseUnitsOfMicros, type X402Config } from '../config.ts';
import type { Database } from '../db/pool.ts';
import { ApiError, errorEnvelope, fromFrameworkError, toApiError } from '../errors.ts';
import type { KeyGrant } from '../keys/store.ts';
import { SERVER_NAMES } from '../mcp/names.ts';
import { ALL_IN_ONE, AllInOne, withoutAccountTools } from '../mcp/registry.ts';
import type { MeterDecision } from '../metering/meter.ts';
import { ProtocolAnswerer, type ProtocolAnswer } from '../gateway/answer.ts';
import { singleHeader } from '../gateway/authenticate.ts';
import { classify } from '../gateway/classify.ts';
import type { Classified, Reserved } from '../gateway/context.ts';
import type { GatewayDeps } from '../gateway/plugin.ts';
import { ConnectLimiter } from '../gateway/rate-limit.ts';
import { relay } from '../gateway/relay.ts';
import { route } from '../gateway/route.ts';
import { runTool, successResult } from '../gateway/run-tool.ts';
import { CLIENT_GONE, creditsFor, Delivery, type Payment } from '../gateway/delivery.ts';
import type { Facilitator } from './facilitator.ts';

/** The account id x402 calls run under (they have none): the nil UUID, never a real account. */
export const X402_ACCOUNT = '00000000-0000-0000-0000-000000000000';

export interface X402Deps {
  config: X402Config;
  facilitator: Facilitator;
  db: Database;
}

type PluginDeps = Pick<GatewayDeps, 'registry' | 'usage' | 'metrics' | 'toolTimeoutMs' | 'version' | 'connectLimit' | 'writeTimeoutMs' | 'allInOne' | 'modernViaSdk'> & X402Deps;

/** The tool's price in the asset's base units: credits × micro-USD per credit, scaled to the decimals. */
export function priceOf(credits: number, config: X402Config): bigint {
  return baseUnitsOfMicros(BigInt(credits) * config.usdMicrosPerCredit, config.assetDecimals);
}

export function requirementsOf(credits: number, config: X402Config): PaymentRequirements {
  return {
    scheme: 'exact',
    network: config.network as `${string}:${string}`,
    asset: config.asset,
    amount: priceOf(credits, config).toString(),
    payTo: config.payTo,
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    extra: { name: config.assetName, version: config.assetVersion },
  };
}

/** What a grant looks like to the reused stages: no key, no account, every server, no credits. */
function anonymousGrant(config: X402Config): KeyGrant {
  return {
    key_id: 'x402',
    account_id: X402_ACCOUNT,
    key_servers: null,
    expires_at: null,
    revoked_at: null,
    account_status: 'active',
    read_only: false,
    plan: 'x402',
    plan_servers: [...SERVER_NAMES],
    requests_per_minute: config.rateLimit.requestsPerMinute,
    burst: config.rateLimit.burst,
    balance: 0,
  };
}

const NO_DECISION: MeterDecision = {
  outcome: 'ok',
  balance: 0,
  plan: 'x402',
  requestsPerMinute: 0,
  burst: 0,
  rateRemaining: 0,
  rateResetSeconds: 0,
  retryAfterSeconds: 0,
};

interface X402Trail {
  server: string;
  tool: string;
  /** As on /mcp (cryptomcp_mcp_requests_total): 'ok', CLIENT_GONE, or the public error code. */
  outcome?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    x402Trail: X402Trail | null;
  }
}

export async function x402Plugin(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const { config } = deps;
  const registry = withoutAccountTools(deps.registry);
  // /x402/mcp: every server at one URL, as on /mcp, without the tools that need an account.
  const endpoints = new AllInOne(registry, { ...deps.allInOne, tools: deps.allInOne.tools.filter((t) => t.accountBound !== true) });
  const allInOne = endpoints.view(SERVER_NAMES);
  // /x402/mcp/discover: its discovery mode, as on /mcp (gateway/relay.ts).
  const discovery = endpoints.discovery(allInOne);
  const routeOf = (request: FastifyRequest<{ Params: { server?: string } }>) =>
    request.params.server === undefined
      ? { requestId: request.id, server: request.routeOptions.config.discovery === true ? discovery : allInOne }
      : route(registry, request.id, request.params.server);
  const answerer = new ProtocolAnswerer(deps.version, (err) => app.log.debug({ err }, 'MCP protocol layer refused a message'), { modernViaSdk: deps.modernViaSdk, tasks: false });
  const connectLimiter = new ConnectLimiter(deps.connectLimit);
  const addressLimiter = new ConnectLimiter(config.addressLimit);
  const payerLimiter = new ConnectLimiter(config.rateLimit);
  /** Authorizations being verified, run or settled in this process: a second copy is a replay. */
  const inFlight = new Set<string>();
  app.addHook('onClose', async () => answerer.close());
  app.decorateRequest('x402Trail', null);

  for (const url of ['/', '/:server', '/:server/', '/discover', '/discover/']) {
    const routeConfig = { discovery: url.startsWith('/discover') };
    app.route({
      method: ['GET', 'DELETE', 'PUT', 'PATCH'],
      url,
      config: routeConfig,
      handler: async (request: FastifyRequest<{ Params: { server?: string } }>, reply) => {
        routeOf(request);
        reply.header('allow', 'POST');
        throw new ApiError('METHOD_NOT_ALLOWED');
      },
    });
    app.post(url, { config: routeConfig }, (request: FastifyRequest<{ Params: { server?: string } }>, reply) => handle(request, reply));
  }

  async function handle(request: FastifyRequest<{ Params: { server?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const routed = routeOf(request);
    const exchange = relay(endpoints, { authorized: { ...routed, grant: anonymousGrant(config) }, body: request.body, headers: request.headers });
    const call = classify(exchange.authorized, exchange.body, exchange.headers);
    if (call.call.kind !== 'tools/call') {
      connectLimiter.admit(`x402:${request.ip}`);
      return send(reply, await answerer.answer(call, exchange.headers, undefined));
    }
    const toolCall = { ...call, call: call.call };
    // Counted and paid under the server the tool belongs to, whichever URL was called.
    const trail: X402Trail = { server: toolCall.call.tool.server, tool: toolCall.call.tool.name };
    request.x402Trail = trail;
    addressLimiter.admit(request.ip);
    const credits = toolCall.call.tool.credits;
    if (credits === 0) return runAndAnswer(toolCall, request, exchange.headers, reply, undefined);

    const requirements = requirementsOf(credits, config);
    const resourceUrl = `${request.server.origins.base}/x402/mcp${call.server.name === ALL_IN_ONE ? '' : `/${call.server.name}`}`;
    const paymentRequired = (error?: string): PaymentRequired => ({
      x402Version: 2,
      ...(error ? { error } : {}),
      resource: { url: resourceUrl, description: `${trail.server}.${trail.tool}: ${credits} credits`, mimeType: 'application/json' },
      accepts: [requirements],
    });
    const refuse = (code: 'PAYMENT_REQUIRED' | 'PAYMENT_INVALID', reason: string, extra: Record<string, unknown> = {}): never => {
      const required = paymentRequired(code === 'PAYMENT_REQUIRED' ? 'payment required' : reason);
      throw new ApiError(
        code,
        undefined,
        { ...(code === 'PAYMENT_INVALID' ? { reason } : {}), ...extra, x402: required },
        { 'payment-required': encodePaymentRequiredHeader(required) },
      );
    };

    const payload = paymentOf(request, toolCall);
    if (payload === undefined) return refuse('PAYMENT_REQUIRED', 'missing');
    if (payload === null) return refuse('PAYMENT_INVALID', 'malformed_payment');
    const accepted = payload.accepted as Partial<PaymentRequirements> | undefined;
    if (
      payload.x402Version !== 2 ||
      accepted?.scheme !== requirements.scheme ||
      accepted.network !== requirements.network ||
      accepted.asset?.toLowerCase() !== requirements.asset.toLowerCase() ||
      accepted.payTo?.toLowerCase() !== requirements.payTo.toLowerCase() ||
      accepted.amount !== requirements.amount
    ) {
      return refuse('PAYMENT_INVALID', 'requirements_mismatch');
    }
    const authorization = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
    const payer = typeof authorization?.from === 'string' ? authorization.from.toLowerCase() : undefined;
    const nonce = typeof authorization?.nonce === 'string' ? authorization.nonce.toLowerCase() : undefined;
    if (!payer || !nonce) return refuse('PAYMENT_INVALID', 'malformed_payment');
    const replayKey = `${payer}|${nonce}`;
    if (inFlight.has(replayKey)) return refuse('PAYMENT_INVALID', 'replayed');
    inFlight.add(replayKey);
    try {
      const verified = await deps.facilitator.verify(payload, requirements).catch((err: unknown): VerifyResponse => {
        // A refusal the facilitator answered as an error (VerifyError) is a refusal; anything else is a fault.
        const reason = (err as { invalidReason?: unknown }).invalidReason;
        if (typeof reason === 'string') return { isValid: false, invalidReason: reason };
        // Only the error's class: its message could carry the payload's addresses.
        request.log.warn({ error: (err as Error).name }, 'x402 verify could not run');
        throw new ApiError('SERVICE_UNAVAILABLE', 'The payment could not be verified now; retry later.', { provider: 'x402-facilitator' });
      });
      if (!verified.isValid) return refuse('PAYMENT_INVALID', verified.invalidReason ?? 'invalid', verified.invalidMessage ? { message: verified.invalidMessage } : {});
      // Only now is `from` known to have signed: a forged payload cannot spend a real payer's bucket.
      payerLimiter.admit(payer);
      return await runAndAnswer(toolCall, request, exchange.headers, reply, async () => {
        let settled: SettleResponse;
        try {
          settled = await deps.facilitator.settle(payload, requirements);
        } catch (err) {
          settled = { success: false, errorReason: (err as { errorReason?: string }).errorReason ?? 'settle_error', transaction: '', network: requirements.network };
        }
        if (!settled.success) {
          // Ours to fix (the settlement key, the node, the facilitator), not the payer's: counted apart.
          trail.outcome = 'SETTLEMENT_FAILED';
          return refuse('PAYMENT_INVALID', 'settlement_failed', { settle_error: settled.errorReason ?? null });
        }
        await recordRevenue(deps, request, { payload, requirements, settled, payer, credits, server: trail.server, tool: trail.tool });
        return settled;
      });
    } finally {
      inFlight.delete(replayKey);
    }
  }

  /**
   * Runs the tool, then delivers under the one delivery policy (gateway/delivery.ts): `settle`
   * (paid calls) is the payment's capture, run only when the answer exists, holds data and its
   * client is still there; an unpaid authorization needs no release (nothing moved).
   */
  async function runAndAnswer(
    call: Classified & { call: { kind: 'tools/call' } },
    request: FastifyRequest,
    headers: IncomingHttpHeaders,
    reply: FastifyReply,
    settle: (() => Promise<SettleResponse>) | undefined,
  ): Promise<FastifyReply> {
    const trail = request.x402Trail;
    let settled: SettleResponse | undefined;
    const payment: Payment = {
      capture: async () => {
        if (settle) settled = await settle();
      },
      release: async () => null,
    };
    const delivery = new Delivery(reply.raw, payment, { writeTimeoutMs: deps.writeTimeoutMs });
    const reserved: Reserved & { call: { kind: 'tools/call' } } = { ...call, decision: NO_DECISION, cost: 0 };
    let output;
    try {
      output = await runTool(reserved, { usage: deps.usage, timeoutMs: deps.toolTimeoutMs, clientGone: delivery.signal });
    } catch (err) {
      await delivery.release('tool failed');
      throw toApiError(err);
    }
    // What the answer costs by the one rule (delivery.ts): an answer with no data is not settled. A
    // page cut for size costs a part of the price, which an x402 "exact" authorization cannot
    // move (its whole amount or nothing): such a page is neither settled in full nor given away,
    // but refused, unsettled, with the limit that would make it a full page at this price.
    const due = creditsFor(call.call.tool.credits, output);
    if (due.credits === 0) await delivery.release('the answer held no data');
    else if (due.credits < call.call.tool.credits && output.page !== undefined) {
      await delivery.release('a page cut for size');
      const { held, limit } = output.page;
      throw new ApiError(
        'INVALID_PARAMS',
        `Only ${held} of the ${limit} items asked for fit one answer, which would be charged ${due.credits} of ${call.call.tool.credits} credits; an x402 payment settles its whole price or nothing, so this page was not delivered and nothing was paid. Ask limit ${held} (the same cursor) for a full page at this price.`,
        { issues: [{ path: 'limit', message: `at most ${held} items fit one answer here` }], fits: held },
      );
    }
    if (!(await delivery.handOver())) {
      if (trail) trail.outcome = CLIENT_GONE;
      return reply.code(499).send();
    }
    const result = successResult(reserved, output, { credits: settled ? call.call.tool.credits : 0, remaining: 0 });
    if (settled) {
      result._meta = { ...result._meta, 'x402/payment-response': settled };
      reply.header('payment-response', encodePaymentResponseHeader(settled));
    }
    return send(reply, await answerer.answer(reserved, headers, result));
  }

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const apiError = fromFrameworkError(err);
    if (apiError.code === 'INTERNAL_ERROR') request.log.error({ err }, 'unhandled error on /x402/mcp');
    const trail = request.x402Trail;
    if (trail && !trail.outcome) trail.outcome = apiError.code;
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    const server = (request.url.split('?')[0] ?? '').replace(/^\/x402\/mcp\/?/, '').split('/')[0] ?? '';
    const apiError = new ApiError('SERVER_NOT_FOUND', undefined, { server, available: [...deps.registry.keys()] });
    return reply.code(apiError.status).send(errorEnvelope(apiError, request.id));
  });

  app.addHook('onResponse', async (request, reply) => {
    const trail = request.x402Trail;
    if (trail) deps.metrics.x402Calls.inc({ server: trail.server, tool: trail.tool, outcome: trail.outcome ?? (reply.statusCode < 400 ? 'ok' : 'PROTOCOL_ERROR') });
  });
}

/**
 * The payment: the PAYMENT-SIGNATURE header (x402 v2 over HTTP), else params._meta["x402/payment"]
 * (x402's MCP binding). undefined: none sent; null: sent but not a payment payload.
 */
function paymentOf(request: FastifyRequest, call: Classified): PaymentPayload | null | undefined {
  const header = singleHeader(request.headers['payment-signature']) ?? singleHeader(request.headers['x-payment']);
  if (header !== undefined) {
    try {
      const decoded = decodePaymentSignatureHeader(header);
      return typeof decoded === 'object' && decoded !== null && 'payload' in decoded ? decoded : null;
    } catch {
      return null;
    }
  }
  const meta = (call.message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.['x402/payment'];
  if (meta === undefined) return undefined;
  return typeof meta === 'object' && meta !== null && 'payload' in meta && 'accepted' in meta ? (meta as PaymentPayload) : null;
}

async function recordRevenue(
  deps: PluginDeps,
  request: FastifyRequest,
  paid: { payload: PaymentPayload; requirements: PaymentRequirements; settled: SettleResponse; payer: string; credits: number; server: string; tool: string },
): Promise<void> {
  const micros = BigInt(paid.credits) * deps.config.usdMicrosPerCredit;
  deps.metrics.revenue.inc({ source: 'x402', chain: paid.requirements.network }, Number(micros));
  // The money ledger's row; the settlement already happened, so a failed write is logged, not refused.
  await deps.db
    .query(
      `INSERT INTO payments (kind, chain, tx_hash, payer, token, amount, decimals, usd_micros, item, credits, request_id)
       VALUES ('x402', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (chain, tx_hash) DO NOTHING`,
      [
        paid.requirements.network,
        paid.settled.transaction.toLowerCase(),
        paid.payer,
        paid.requirements.asset.toLowerCase(),
        paid.requirements.amount,
        deps.config.assetDecimals,
        micros.toString(),
        `${paid.server}.${paid.tool}`,
        paid.credits,
        request.id,
      ],
    )
    .catch((err: unknown) => request.log.error({ error: (err as Error).name, transaction: paid.settled.transaction }, 'x402 revenue row not written'));
}

function send(reply: FastifyReply, answer: ProtocolAnswer): FastifyReply {
  if (answer.status >= 400) throw new ApiError('INVALID_REQUEST');
  reply.code(answer.status);
  if (answer.contentType) reply.header('content-type', answer.contentType);
  return reply.send(answer.body === '' ? undefined : answer.body);
}
