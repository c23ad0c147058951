import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import {
  AnalyticsWebhookBody,
  AnalyticsWebhookParams,
  Deleted,
  Delivery,
  DeliveryParams,
  PlayerDeliveryParams,
  TestQueued,
  OrganizationParams,
  PlayerWebhookBody,
  PlayerWebhookParams,
  Registered,
  SigningKey,
  WebhookList,
  type WebhookKind,
} from './webhooks.schemas.ts';

const tags = ['webhooks'];
const permission = 'webhooks:manage' as const;

/**
 * Registration of analytics and player webhooks (docs/webhooks.md). The spec's POST and DELETE, and a
 * GET of the registered ones (never their keys).
 */
export default async function webhooksRoutes(app: App, { services }: Deps) {
  const service = services.webhooks;
  const kinds: Array<{
    kind: WebhookKind;
    body: typeof AnalyticsWebhookBody | typeof PlayerWebhookBody;
    params: typeof AnalyticsWebhookParams | typeof PlayerWebhookParams;
    what: string;
  }> = [
    { kind: 'analytics', body: AnalyticsWebhookBody, params: AnalyticsWebhookParams, what: 'analytics (view, identified_view, attention_span)' },
    { kind: 'players', body: PlayerWebhookBody, params: PlayerWebhookParams, what: 'player change' },
  ];
  for (const { kind, body, params, what } of kinds) {
    const base = `/v1/organizations/:organization_id/webhooks/${kind}`;
    app.post(
      base,
      {
        config: { wrap: 'webhook', permission },
        schema: { tags, summary: `Register an ${what} webhook`, params: OrganizationParams, body, response: { 201: Registered } },
      },
      async (req, reply) => {
        reply.code(201);
        return service.register(req.params.organization_id, req.auth.organizationId, kind, req.body);
      },
    );

    app.get(
      base,
      {
        config: { list: '', permission },
        schema: { tags, summary: `The organization's ${what} webhooks`, params: OrganizationParams, response: { 200: WebhookList } },
      },
      async (req) => service.list(req.params.organization_id, req.auth.organizationId, kind),
    );

    app.delete(
      `${base}/:id`,
      {
        config: { permission },
        schema: { tags, summary: `Delete an ${what} webhook`, params, response: { 200: Deleted } },
      },
      async (req) => service.remove(req.params.organization_id, req.auth.organizationId, kind, req.params.id),
    );

    const deliveryParams = kind === 'analytics' ? DeliveryParams : PlayerDeliveryParams;
    app.post(
      `${base}/:id/test`,
      {
        config: { permission },
        schema: {
          tags,
          summary: `Send a webhook.test message to an ${what} webhook (signed and retried like any other)`,
          params: deliveryParams,
          response: { 202: TestQueued },
        },
      },
      async (req, reply) => reply.code(202).send(await service.sendTest(req.params.organization_id, req.auth.organizationId, kind, req.params.id)),
    );

    app.get(
      `${base}/:id/deliveries`,
      {
        config: { list: '', permission },
        schema: {
          tags,
          summary: `The latest deliveries of an ${what} webhook (at most 50, newest first) with their status and attempts`,
          params: deliveryParams,
          response: { 200: Type.Array(Delivery) },
        },
      },
      async (req) => service.deliveries(req.params.organization_id, req.auth.organizationId, kind, req.params.id),
    );
  }

  // Added: the key that signs the webhooks without a key of their own (videos' webhook_url, GDPR requests).
  const keyPath = '/v1/organizations/:organization_id/webhooks/signing_key';
  app.get(
    keyPath,
    {
      config: { permission },
      schema: {
        tags,
        summary: "The organization's key for video and GDPR webhooks (made on first use)",
        params: OrganizationParams,
        response: { 200: SigningKey },
      },
    },
    async (req) => service.signingKey(req.params.organization_id, req.auth.organizationId),
  );

  app.post(
    keyPath,
    {
      config: { permission },
      schema: { tags, summary: 'Replace the key for video and GDPR webhooks', params: OrganizationParams, response: { 201: SigningKey } },
    },
    async (req, reply) => {
      reply.code(201);
      return service.rotateSigningKey(req.params.organization_id, req.auth.organizationId);
    },
  );
}
