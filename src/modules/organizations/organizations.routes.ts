import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import {
  AccountList,
  FamilyTree,
  Organization,
  OrganizationList,
  OrganizationListQuery,
  OrganizationParams,
  UpdateOrganizationBody,
} from './organizations.schemas.ts';

const tags = ['organizations'];

export default async function organizationsRoutes(app: App, { config, services }: Deps) {
  const service = services.organizations;

  app.get(
    '/v1/organizations',
    {
      config: { list: 'organizations' },
      schema: {
        tags,
        summary: "The token's organization and its descendants: a bare array without per_page, {organizations, summary} with it",
        querystring: OrganizationListQuery,
        response: { 200: OrganizationList },
      },
    },
    async (req) => answerArrayOrEnvelope('organizations', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, page)),
  );

  app.get(
    '/v1/accounts',
    {
      config: { list: 'accounts' },
      schema: {
        tags,
        summary: 'Accounts the token may see (its organization and descendants): a bare array without per_page, {accounts, summary} with it',
        querystring: OrganizationListQuery,
        response: { 200: AccountList },
      },
    },
    async (req) => answerArrayOrEnvelope('accounts', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, page)),
  );

  app.get(
    '/v1/organizations/:id',
    {
      schema: { tags, summary: "Get an organization (the token's or a descendant)", params: OrganizationParams, response: { 200: Organization } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  app.patch(
    '/v1/organizations/:id',
    {
      config: { permission: 'org:manage', wrap: 'organization' },
      schema: {
        tags,
        summary: 'Update an organization: name, domains and allotment limits (owners)',
        params: OrganizationParams,
        body: UpdateOrganizationBody,
        response: { 200: Organization },
      },
    },
    async (req) => service.update(req.auth.organizationId, req.params.id, req.body),
  );

  app.get(
    '/v1/organizations/:id/family',
    {
      schema: {
        tags,
        summary: 'The family tree the organization belongs to, as far as the token may see it',
        params: OrganizationParams,
        response: { 200: FamilyTree },
      },
    },
    async (req) => service.family(req.auth.organizationId, req.params.id),
  );
}
