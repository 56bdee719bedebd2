// Fetches a Client ID Metadata Document, whose URL anyone may name in an unauthenticated
// authorization request, without letting that URL reach this network: the host is resolved first,
// every address it resolves to must be public, and the connection goes to the address that was
// checked (DNS is not asked again, so a rebinding answer cannot swap in an internal address).
import https from 'node:https';
import { Readable } from 'node:stream';
import { NonPublicAddressError, pinnedLookup, publicAddresses } from '../lib/public-address.ts';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** An https GET to a public address only, as a fetch Response (redirects are not followed). */
export async function publicFetch(url: URL, init: { headers?: HeadersInit; signal?: AbortSignal | null } = {}): Promise<Response> {
  if (url.protocol !== 'https:') throw new NonPublicAddressError(`${url.protocol} is not fetched; https only`);
  const [pinned] = await publicAddresses(url.hostname);
  init.signal?.throwIfAborted();
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  return new Promise<Response>((resolve, reject) => {
    const request = https.request(
      url,
      { method: 'GET', headers, lookup: pinnedLookup(pinned!), signal: init.signal ?? undefined, agent: false },
      (res) => {
        const received = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of [value ?? []].flat()) received.append(name, v);
        }
        const status = res.statusCode ?? 502;
        const body = NULL_BODY_STATUSES.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        if (!body) res.resume();
        resolve(new Response(body, { status, headers: received }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}
