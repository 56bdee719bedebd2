// Webhooks per the Standard Webhooks specification: a `whsec_` secret per endpoint, the
// webhook-id / webhook-timestamp / webhook-signature headers (signed with the standardwebhooks
// package; during a rotation with both secrets), and a POST that can only reach a public
// address: the host is resolved and checked when the rule is created and again at every send,
// and the connection goes to the address that was checked. A development setting lets private
// and loopback targets (and plain http) through.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { NonPublicAddressError, pinnedLookup, publicAddresses } from '../lib/public-address.ts';

export interface WebhookPolicy {
  /** Development only: http:// and private or loopback addresses are allowed. */
  allowPrivate: boolean;
  /** How long one attempt may take, connection to last byte. */
  timeoutMs: number;
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Why a URL may not be a webhook target, or null when it may (checked against DNS now). */
export async function webhookUrlRefusal(raw: string, policy: Pick<WebhookPolicy, 'allowPrivate'>): Promise<string | null> {
  const url = URL.parse(raw);
  if (!url) return 'not a URL';
  if (url.username || url.password) return 'a URL with credentials is not allowed';
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) return 'only https:// URLs are allowed';
  if (policy.allowPrivate) return null;
  try {
    await publicAddresses(url.hostname);
    return null;
  } catch (err) {
    if (err instanceof NonPublicAddressError) return err.message;
    return `${url.hostname} does not resolve`;
  }
}

/** The signature header: one `v1,<base64>` per secret in force (the current one first). */
export function webhookSignature(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
}

export type SendResult =
  | { outcome: 'ok' | 'http_error'; status: number; ms: number }
  | { outcome: 'network_error' | 'timeout' | 'refused_address'; status: null; ms: number; error: string };

/** One POST of a signed body to the URL, pinned to the address checked just before. */
export async function webhookSend(
  policy: WebhookPolicy,
  target: { url: string; secrets: readonly string[] },
  message: { id: string; at: Date; body: string },
): Promise<SendResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const refusal = await webhookUrlRefusal(target.url, policy);
  if (refusal) return { outcome: 'refused_address', status: null, ms: ms(), error: refusal };
  const url = new URL(target.url);
  const pinned = policy.allowPrivate ? undefined : (await publicAddresses(url.hostname))[0];
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'cryptomcp-webhooks',
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(message.at.getTime() / 1000)),
    'webhook-signature': webhookSignature(target.secrets, message.id, message.at, message.body),
  };
  return new Promise<SendResult>((resolve) => {
    const signal = AbortSignal.timeout(policy.timeoutMs);
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'POST', headers, signal, agent: false, ...(pinned ? { lookup: pinnedLookup(pinned) } : {}) },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve({ outcome: status >= 200 && status < 300 ? 'ok' : 'http_error', status, ms: ms() });
        });
        res.on('error', (err) => resolve({ outcome: 'network_error', status: null, ms: ms(), error: err.message }));
      },
    );
    request.on('error', (err) => {
      const timedOut = signal.aborted;
      resolve({ outcome: timedOut ? 'timeout' : 'network_error', status: null, ms: ms(), error: timedOut ? `no answer within ${policy.timeoutMs} ms` : err.message });
    });
    request.end(message.body);
  });
}
