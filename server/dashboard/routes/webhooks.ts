// The account's alert webhooks: GET /api/webhooks (endpoints with delivery counts), POST
// /api/webhooks (add an endpoint by URL: its signing secret is answered this once),
// GET /api/webhooks/:id/deliveries (the delivery log: each attempt's outcome, response code and
// duration), POST /api/webhooks/:id/rotate (a new signing secret, shown once; the old one signs
// beside it for grace_seconds), POST /api/webhooks/deliveries/:id/redeliver (send again now).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { webhookDeliveryList, webhookEndpointCreate, webhookEndpointList, webhookSecretRotate } from '../../alerts/endpoints.ts';
import { webhookRedeliver } from '../../alerts/jobs.ts';
import type { Database } from '../../db/pool.ts';
import { ApiError } from '../../errors.ts';
import { parseBody } from '../body.ts';
import { sessionOf } from '../session.ts';

const Id = z.object({ id: z.coerce.number().int().positive() });
const DeliveriesQuery = z.object({ before: z.coerce.number().int().positive().optional(), limit: z.coerce.number().int().min(1).max(100).default(20) });
const CreateBody = z.object({ url: z.string().min(1).max(2048) }).strict();
const RotateBody = z.object({ grace_seconds: z.number().int().min(0).max(7 * 86400).default(86400) });

export function webhookRoutes(authed: FastifyInstance, deps: { db: Database; allowPrivateWebhooks: boolean }): void {
  const { db } = deps;
  const endpointMissing = (id: number) => new ApiError('NOT_FOUND', 'No webhook endpoint with this id on your account.', { webhook: id });

  authed.get('/webhooks', async (request) => ({ webhooks: await webhookEndpointList(db, sessionOf(request).account_id) }));

  authed.post('/webhooks', async (request, reply) => {
    const { url } = parseBody(CreateBody, request.body);
    const made = await webhookEndpointCreate(db, sessionOf(request).account_id, url, { allowPrivate: deps.allowPrivateWebhooks });
    if (!made.ok) throw new ApiError('INVALID_PARAMS', `The webhook URL is refused: ${made.reason}.`, { issues: [{ path: 'url', message: made.reason }] });
    return reply.code(made.created ? 201 : 200).send({ id: made.id, url: made.url, created: made.created, secret: made.secret });
  });

  authed.get('/webhooks/:id/deliveries', async (request) => {
    const { id } = parseBody(Id, request.params);
    const q = parseBody(DeliveriesQuery, request.query);
    const deliveries = await webhookDeliveryList(db, sessionOf(request).account_id, id, q);
    if (!deliveries) throw endpointMissing(id);
    return { deliveries, next_before: deliveries.length === q.limit ? deliveries.at(-1)!.id : null };
  });

  authed.post('/webhooks/:id/rotate', async (request) => {
    const { id } = parseBody(Id, request.params);
    const body = parseBody(RotateBody, request.body ?? {});
    const rotated = await webhookSecretRotate(db, sessionOf(request).account_id, id, body.grace_seconds);
    if (!rotated) throw endpointMissing(id);
    return rotated;
  });

  authed.post('/webhooks/deliveries/:id/redeliver', async (request, reply) => {
    const { id } = parseBody(Id, request.params);
    if (!(await webhookRedeliver(db, sessionOf(request).account_id, id))) throw new ApiError('NOT_FOUND', 'No webhook delivery with this id on your account.', { delivery: id });
    return reply.code(202).send({ delivery: id, status: 'pending' });
  });
}
