import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { ApiToken, ApiTokenParams, CreateApiTokenBody, CreatedApiToken } from './tokens.schemas.ts';

const tags = ['api tokens'];
const permission = 'security:manage' as const;

/**
 * The organization's API tokens (docs/security.md, "API tokens"): listed without their secrets,
 * created with a role up to the creator's (the secret answered once), revoked at once.
 */
export default async function tokensRoutes(app: App, { services }: Deps) {
  const tokens = services.tokens;

  app.get(
    '/v1/api_tokens',
    {
      config: { permission, list: 'api_tokens' },
      schema: { tags, summary: "The organization's API tokens (never their secrets)", response: { 200: Type.Array(ApiToken) } },
    },
    async (req) => tokens.list(req.auth.organizationId),
  );

  app.post(
    '/v1/api_tokens',
    {
      config: { permission, wrap: 'api_token', secretAnswer: true },
      schema: {
        tags,
        summary: 'Create an API token with a role up to your own; the secret is in this answer only',
        body: CreateApiTokenBody,
        response: { 201: CreatedApiToken },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await tokens.create(req.auth.role, req.auth.userId, req.auth.organizationId, req.body)),
  );

  app.delete(
    '/v1/api_tokens/:id',
    { config: { permission }, schema: { tags, summary: 'Revoke an API token: it stops working at once', params: ApiTokenParams, response: { 200: ApiToken } } },
    async (req) => tokens.revoke(req.auth.role, req.auth.organizationId, req.params.id),
  );
}
