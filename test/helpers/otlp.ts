// A loopback OTLP/HTTP receiver speaking the JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json):
// it answers every export with 200 and keeps each span with its request path, resource service
// name and instrumentation scope.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}

export interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  events: { name: string; timeUnixNano: string; attributes: OtlpAttribute[] }[];
  links: { traceId: string; spanId: string; attributes: OtlpAttribute[] }[];
  status: { code?: number; message?: string };
}

export interface ReceivedSpan {
  path: string;
  serviceName: string | undefined;
  /** The resource's attributes, as plain values. */
  resource: Record<string, unknown>;
  scope: { name: string; version?: string };
  span: OtlpSpan;
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Every span received so far, in arrival order (clear with `received.length = 0`). */
  received: ReceivedSpan[];
  /** Export requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      requests++;
      const payload = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[] }[];
      };
      for (const rs of payload.resourceSpans) {
        const serviceName = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
        const resource = plainAttributes(rs.resource.attributes);
        for (const ss of rs.scopeSpans) for (const span of ss.spans) received.push({ path: req.url ?? '', serviceName, resource, scope: ss.scope, span });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OTLP attribute value as the plain value it encodes (integers arrive as strings in JSON). */
export function plainValue(v: OtlpValue): unknown {
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values.map(plainValue);
}

/** OTLP attributes as a plain object. */
export function plainAttributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, plainValue(a.value)]));
}
