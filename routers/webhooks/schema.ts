// Webhook subscriptions (spec §2.12, §4.17, docs/webhooks.md): inputs and answers.
import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { EVENT_TYPES } from '../events.js';
import { ListQueryShape, intParam } from '../../db/paging.js';
import { Timestamp } from '../common.js';

export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 512;

const WebhookUrl = z
  .string()
  .max(WEBHOOK_URL_MAX)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute https URL' });
      return;
    }
    if (url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an https URL (webhooks are sent over HTTPS only)' });
    else if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
    else if (url.hash) ctx.addIssue({ code: 'custom', message: 'must not carry a #fragment' });
  })
  .meta({ description: 'HTTPS only; the host must resolve to public addresses (checked now and at every send).' });

const Events = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((e, i) => {
      if (seen.has(e)) ctx.addIssue({ code: 'custom', message: `lists ${e} twice`, path: [i] });
      seen.add(e);
    });
  })
  .meta({ description: 'Event types to receive (docs/webhooks.md lists them).' });

const Description = z.string().max(WEBHOOK_DESCRIPTION_MAX);

export const WebhookId = z
  .string()
  .max(LIMITS.idMax)
  .regex(/^wh_[0-9a-f]{32}$/, 'webhook ids look like wh_ followed by 32 hex digits');
export const DeliveryId = z
  .string()
  .max(LIMITS.idMax)
  .regex(/^whd_[0-9a-f]{32}$/, 'delivery ids look like whd_ followed by 32 hex digits');

export const CreateWebhookInput = z.object({ url: WebhookUrl, events: Events, description: Description.optional() }).strict();
export const UpdateWebhookInput = z
  .object({
    id: WebhookId,
    url: WebhookUrl.optional(),
    events: Events.optional(),
    description: Description.nullable().optional(),
    active: z.boolean().optional().meta({ description: '`true` re-activates a disabled subscription (and clears GET /v1/me `webhooks.disabled`); `false` pauses it.' }),
  })
  .strict();
export const WebhookIdInput = z.object({ id: WebhookId }).strict();
export const ListWebhooksInput = z.object(ListQueryShape).strict();
export const ListDeliveriesInput = z
  .object({ id: WebhookId, limit: intParam(1, LIMITS.page.maxLimit), cursor: z.string().max(LIMITS.cursorMax).optional() })
  .strict();
export const RedeliverInput = z.object({ id: WebhookId, deliveryId: DeliveryId }).strict();

export const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  active: z.boolean(),
  disabledAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type WebhookOut = z.infer<typeof Webhook>;

export const CreatedWebhook = Webhook.extend({ secret: z.string().meta({ description: 'whsec_…, shown once.' }) });
export const RotatedSecret = z.object({
  id: z.string(),
  secret: z.string().meta({ description: 'The new whsec_… secret, shown once.' }),
  previousSecretExpiresAt: Timestamp.meta({ description: 'Until then deliveries carry a second v1 signed with the previous secret.' }),
});

export const Attempt = z.object({
  at: Timestamp,
  status: z.number().int().nullable(),
  latencyMs: z.number().int(),
  errorClass: z.string().nullable(),
});
export const Delivery = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attemptCount: z.number().int(),
  nextAttemptAt: Timestamp.nullable().meta({ description: 'When the next attempt of a pending delivery starts (a subscription held after timeouts holds it too); null otherwise.' }),
  dropped: z.boolean().meta({
    description: 'true: ended as failed, with no attempt, by the backlog cap of a subscription failing for a minute or more (docs/webhooks.md "Backlog"); redeliver sends it.',
  }),
  createdAt: Timestamp,
  attempts: z.array(Attempt),
});
export type DeliveryOut = z.infer<typeof Delivery>;
