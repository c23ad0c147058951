import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { BlacklistedIpRange, CreateIpRangeBody, IpRangeList, IpRangeListQuery, IpRangeParams } from './ip-ranges.schemas.ts';

const tags = ['blacklisted IP ranges'];
// Reading the blacklist is as sensitive as writing it (it tells who is being kept out): admins and owners.
const permission = 'security:manage' as const;

export default async function ipRangesRoutes(app: App, { config, services }: Deps) {
  const service = services.ipRanges;

  app.get(
    '/v1/blacklisted_ip_ranges',
    {
      config: { list: 'blacklisted_ip_ranges', permission },
      schema: {
        tags,
        summary: 'List blacklisted IP ranges: a bare array without per_page, {blacklisted_ip_ranges, summary} with it',
        querystring: IpRangeListQuery,
        response: { 200: IpRangeList },
      },
    },
    async (req) => answerArrayOrEnvelope('blacklisted_ip_ranges', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, page)),
  );

  app.post(
    '/v1/blacklisted_ip_ranges',
    {
      config: { wrap: 'blacklisted_ip_range', permission },
      schema: {
        tags,
        summary: 'Blacklist an IPv4/IPv6 address or CIDR range; answers 201 with a Location header',
        body: CreateIpRangeBody,
        response: { 201: BlacklistedIpRange },
      },
    },
    async (req, reply) => {
      const range = await service.create(req.auth.organizationId, req.body);
      return reply.code(201).header('location', `/dashboard/v1/blacklisted_ip_ranges/${range.id}`).send(range);
    },
  );

  app.get(
    '/v1/blacklisted_ip_ranges/:id',
    {
      config: { permission },
      schema: { tags, summary: 'Get a blacklisted IP range', params: IpRangeParams, response: { 200: BlacklistedIpRange } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  app.delete(
    '/v1/blacklisted_ip_ranges/:id',
    {
      config: { permission },
      schema: { tags, summary: 'Delete a blacklisted IP range; answers it', params: IpRangeParams, response: { 200: BlacklistedIpRange } },
    },
    async (req) => service.delete(req.auth.organizationId, req.params.id),
  );
}
