import { Type, type Static } from 'typebox';
import { PagingQuery, Summary, idParams } from '../../lib/schemas.ts';

export const BlacklistedIpRange = Type.Object({
  id: Type.Integer(),
  organization_id: Type.Integer(),
  name: Type.String(),
  ip_range: Type.String({ description: 'As given on creation, e.g. "192.168.0.1/24" (blocks 192.168.0.0–192.168.0.255)' }),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
});
export type BlacklistedIpRange = Static<typeof BlacklistedIpRange>;

/** Range 1 on a fresh server: the one the create example makes. */
export const IpRangeParams = idParams(1);

export const CreateIpRangeBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001F\\u007F]*$', description: 'Label; default: the ip_range' })),
    ip_range: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'An IPv4 or IPv6 address or CIDR range: 203.0.113.7, 192.168.0.0/24, 2001:db8::/32, ::ffff:10.0.0.0/104',
    }),
  },
  { examples: [{ name: 'Known scraper network', ip_range: '203.0.113.0/24' }] },
);
export type CreateIpRangeBody = Static<typeof CreateIpRangeBody>;

export const IpRangeListQuery = Type.Object({ ...PagingQuery });
export type IpRangeListQuery = Static<typeof IpRangeListQuery>;

export const IpRangeList = Type.Union(
  [Type.Array(BlacklistedIpRange), Type.Object({ blacklisted_ip_ranges: Type.Array(BlacklistedIpRange), summary: Summary })],
  { description: 'A bare array without per_page, {blacklisted_ip_ranges, summary} with it' },
);
