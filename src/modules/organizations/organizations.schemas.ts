import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { Nullable, Timestamps, idParams } from '../../lib/schemas.ts';
import { AllotmentLimitsInput } from '../allotments/allotments.schemas.ts';

export const Organization = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  parent_id: Nullable(Type.Integer({ description: 'The parent organization, null for a family root' })),
  account_id: Type.Integer({ description: 'The family root (the account the organization belongs to)' }),
  embed_domain: Nullable(Type.String({ description: 'The installation default unless set' })),
  secure_embed_domain: Nullable(Type.String({ description: 'The installation default unless set' })),
  playback_domain: Nullable(Type.String({ description: 'The installation default unless set' })),
  ...Timestamps,
});
export type Organization = Static<typeof Organization>;

/** A host name (optionally with a port), as the domains are written. */
const Domain = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$',
  description: 'Host name, optionally with :port; null restores the installation default',
});

export const OrganizationName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001F\\u007F]*$' });

/** The token's organization: 1 on a fresh server. */
export const OrganizationParams = idParams(1);

export const UpdateOrganizationBody = Type.Object(
  {
    name: Type.Optional(OrganizationName),
    embed_domain: Type.Optional(Nullable(Domain)),
    secure_embed_domain: Type.Optional(Nullable(Domain)),
    playback_domain: Type.Optional(Nullable(Domain)),
    allotments: Type.Optional(AllotmentLimitsInput),
  },
  { examples: [{ name: 'Acme Inc.' }] },
);
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

export const OrganizationListQuery = Type.Object({ ...PagingQuery });
export type OrganizationListQuery = Static<typeof OrganizationListQuery>;

export const OrganizationList = Type.Union([Type.Array(Organization), Type.Object({ organizations: Type.Array(Organization), summary: Summary })], {
  description: 'A bare array without per_page, {organizations, summary} with it',
});
export const AccountList = Type.Union([Type.Array(Organization), Type.Object({ accounts: Type.Array(Organization), summary: Summary })], {
  description: 'A bare array without per_page, {accounts, summary} with it',
});

export interface FamilyNode {
  id: number;
  name: string;
  parent_id: number | null;
  children: FamilyNode[];
}

export const FamilyTree = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    parent_id: Nullable(Type.Integer()),
    children: Type.Array(Type.Unknown(), { description: 'Child organizations, each of this same shape, by id' }),
  },
  { description: "The visible part of the family tree: rooted at the token's organization" },
);
