// Webhook management (spec §4.17, DECISIONS §6; docs/webhooks.md). Every route needs
// `webhooks:write`, reads included (spec §5.3 rule 3); the umbrellas never grant it.
import { z } from 'zod';
import { authedProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { pageSchema } from '../../db/paging.js';
import * as m from './model.js';
import {
  CreatedWebhook,
  CreateWebhookInput,
  Delivery,
  ListDeliveriesInput,
  ListWebhooksInput,
  RedeliverInput,
  RotatedSecret,
  UpdateWebhookInput,
  Webhook,
  WebhookIdInput,
} from './schema.js';

const tags = ['webhooks'];
const scopes = ['webhooks:write' as const];

export const webhooksRouter = router({
  list: authedProcedure
    .meta({ scopes, openapi: { method: 'GET', path: '/v1/webhooks', tags, summary: 'List webhook subscriptions (never their secrets)' } })
    .input(ListWebhooksInput)
    .output(pageSchema(Webhook))
    .query(({ ctx, input }) => m.listWebhooks(ctx.deps, ctx.principal, input)),

  create: authedProcedure
    .meta({
      scopes,
      secretInAnswer: true,
      successStatus: 201,
      idempotent: 'no-replay',
      rateLimits: ['webhookCreate'],
      openapi: {
        method: 'POST',
        path: '/v1/webhooks',
        tags,
        summary: 'Create a webhook subscription; the secret is shown once',
        description: 'The URL must be https and resolve to public addresses. A `webhook.ping` is queued to the new subscription at once. 20 per hour per user.',
      },
    })
    .input(CreateWebhookInput)
    // The door's address check needs DNS, so it runs before the (synchronous) write.
    .use(async ({ ctx, input, next }) => {
      await m.vetUrl(ctx.deps, input.url);
      return next();
    })
    .output(CreatedWebhook)
    .mutation(atomic(({ ctx, input }) => m.createWebhook(ctx.deps, ctx.principal, input))),

  get: authedProcedure
    .meta({ scopes, openapi: { method: 'GET', path: '/v1/webhooks/{id}', tags, summary: 'Read a webhook subscription' } })
    .input(WebhookIdInput)
    .output(Webhook)
    .query(({ ctx, input }) => m.getWebhook(ctx.deps, ctx.principal, input.id)),

  update: authedProcedure
    .meta({ scopes, openapi: { method: 'PATCH', path: '/v1/webhooks/{id}', tags, summary: 'Change url, events, description; `active: true` re-activates a disabled subscription' } })
    .input(UpdateWebhookInput)
    .use(async ({ ctx, input, next }) => {
      if (input.url !== undefined) await m.vetUrl(ctx.deps, input.url);
      return next();
    })
    .output(Webhook)
    .mutation(atomic(({ ctx, input }) => m.updateWebhook(ctx.deps, ctx.principal, input))),

  delete: authedProcedure
    .meta({ scopes, successStatus: 204, openapi: { method: 'DELETE', path: '/v1/webhooks/{id}', tags, summary: 'Delete a webhook subscription and its delivery log' } })
    .input(WebhookIdInput)
    .output(z.void())
    .mutation(atomic(({ ctx, input }) => m.deleteWebhook(ctx.deps, ctx.principal, input.id), ERASES)),

  rotateSecret: authedProcedure
    .meta({ scopes, secretInAnswer: true, openapi: { method: 'POST', path: '/v1/webhooks/{id}/rotate-secret', tags, summary: 'Replace the signing secret; the old one keeps signing for 24 hours' } })
    .input(WebhookIdInput)
    .output(RotatedSecret)
    .mutation(atomic(({ ctx, input }) => m.rotateSecret(ctx.deps, ctx.principal, input.id))),

  ping: authedProcedure
    .meta({
      scopes,
      successStatus: 201,
      rateLimits: ['webhookPing'],
      openapi: {
        method: 'POST',
        path: '/v1/webhooks/{id}/ping',
        tags,
        summary: 'Queue a webhook.ping to this subscription now',
        description: 'Each ping is a request to your receiver: 30 per hour per user (`webhookPing`, successful pings counted), 429 past that. A subscription held after timeouts sends it at once, as its one probe.',
      },
    })
    .input(WebhookIdInput)
    .output(Delivery)
    .mutation(atomic(({ ctx, input }) => m.ping(ctx.deps, ctx.principal, input.id))),

  deliveries: authedProcedure
    .meta({ scopes, openapi: { method: 'GET', path: '/v1/webhooks/{id}/deliveries', tags, summary: 'The delivery log, newest first (last 100, 30 days)' } })
    .input(ListDeliveriesInput)
    .output(pageSchema(Delivery))
    .query(({ ctx, input }) => m.listDeliveries(ctx.deps, ctx.principal, input)),

  redeliver: authedProcedure
    .meta({
      scopes,
      rateLimits: ['webhookRedeliver'],
      openapi: {
        method: 'POST',
        path: '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
        tags,
        summary: 'Queue one new attempt of this delivery (same event id) now',
        description: 'Each redelivery is a request to your receiver: 100 per hour per user (`webhookRedeliver`, successful ones counted), 429 past that. A dropped delivery (`dropped: true`) can be redelivered.',
      },
    })
    .input(RedeliverInput)
    .output(Delivery)
    .mutation(atomic(({ ctx, input }) => m.redeliver(ctx.deps, ctx.principal, input))),
});
