import { Type, type Static } from 'typebox';
import { HttpUrl, IdExample } from '../../lib/schemas.ts';

export const ANALYTICS_EVENTS = ['view', 'identified_view', 'attention_span'] as const;
export const PLAYER_EVENTS = [
  'videofacade_create',
  'videofacade_update',
  'videofacade_destroy',
  'playlist_create',
  'playlist_update',
  'playlist_destroy',
] as const;
export type AnalyticsEvent = (typeof ANALYTICS_EVENTS)[number];
export type PlayerEvent = (typeof PLAYER_EVENTS)[number];
export type WebhookKind = 'analytics' | 'players';

/** Organization 1 on a fresh server, where the create examples register webhook 1 (analytics) and 2 (players). */
export const OrganizationParams = Type.Object({ organization_id: IdExample(1) });
export const AnalyticsWebhookParams = Type.Object({ organization_id: IdExample(1), id: IdExample(1) });
export const PlayerWebhookParams = Type.Object({ organization_id: IdExample(1), id: IdExample(2) });

const SecurityKey = Type.String({
  minLength: 8,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description: 'Signs every delivery (Standard Webhooks) and is echoed in analytics payloads; made for you when omitted',
});

function registration<E extends readonly string[]>(events: E, what: string, example: { url: string; event_subscriptions: E[number][] }) {
  return Type.Object(
    {
      url: HttpUrl,
      security_key: Type.Optional(SecurityKey),
      event_subscriptions: Type.Optional(
        Type.Array(Type.Union(events.map((e) => Type.Literal(e))), {
          minItems: 1,
          maxItems: events.length,
          uniqueItems: true,
          description: `${what}; default: all of them`,
        }),
      ),
    },
    { examples: [example] },
  );
}

export const AnalyticsWebhookBody = registration(ANALYTICS_EVENTS, 'Analytics events to receive', {
  url: 'https://hooks.example.com/reelbase/analytics',
  event_subscriptions: ['view', 'identified_view'],
});
export const PlayerWebhookBody = registration(PLAYER_EVENTS, 'Player changes to receive (videofacade_*: players with one chapter; playlist_*: with more)', {
  url: 'https://hooks.example.com/reelbase/players',
  event_subscriptions: ['playlist_create', 'playlist_update', 'playlist_destroy'],
});
export type WebhookBody = Static<typeof AnalyticsWebhookBody> | Static<typeof PlayerWebhookBody>;

export const Registered = Type.Object({
  webhook_id: Type.Integer(),
  status: Type.String(),
  security_key: Type.String({ description: 'The key deliveries are signed with' }),
});

export const Deleted = Type.Object({ status: Type.String() });

export const Webhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  event_subscriptions: Type.Array(Type.String()),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
});
export type Webhook = Static<typeof Webhook>;
export const WebhookList = Type.Array(Webhook);

export const SigningKey = Type.Object({
  signing_key: Type.String({ description: "Signs the organization's video and GDPR webhooks (Standard Webhooks, whsec_ form)" }),
});

export const DeliveryParams = Type.Object({ organization_id: IdExample(1), id: IdExample(1) });
export const PlayerDeliveryParams = Type.Object({ organization_id: IdExample(1), id: IdExample(2) });

export const Delivery = Type.Object({
  id: Type.Integer({ description: 'The delivery (sent as X-Reelbase-Delivery)' }),
  event: Type.String(),
  status: Type.String({ description: 'pending (waiting for its next attempt), sending, delivered or failed (given up)' }),
  attempts: Type.Integer(),
  max_attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed' }),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  next_attempt_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds, while pending' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
});
export type Delivery = Static<typeof Delivery>;

export const TestQueued = Type.Object({ delivery_id: Type.Integer() });
