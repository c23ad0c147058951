import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { Timestamps, idParams } from '../../lib/schemas.ts';

export const TEAM_NAME_MAX = 255;
export const MAX_TEAM_USER_IDS = 1000;
/** Allowed values of `includes` on GET /v1/teams. */
export const TeamIncludes = ['members'] as const;

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });

export const TeamMember = Type.Object({
  id: Type.Integer(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
});
export type TeamMember = Static<typeof TeamMember>;

export const Team = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  is_admin: Type.Boolean(),
  account_id: Type.Integer({ description: 'The organization the team belongs to' }),
  ...Timestamps,
  members: Type.Optional(Type.Array(TeamMember, { description: 'Only with enable_query_team_members (lists) and on single-team answers; by id' })),
  member_count: Type.Optional(Type.Integer({ description: 'Only with enable_query_team_members (lists) and on single-team answers' })),
});
export type Team = Static<typeof Team>;

export const TeamList = Type.Object({ teams: Type.Array(Team), summary: Summary });

export const TeamListQuery = Type.Object({
  ...PagingQuery,
  admin: Type.Optional(Type.Boolean({ description: 'true: only the admin team; false: every other team' })),
  includes: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 10,
      description: `Relations to include with each team; allowed: ${TeamIncludes.join(', ')} (members is the same as enable_query_team_members=true)`,
    }),
  ),
  query: Type.Optional(
    Type.String({
      maxLength: TEAM_NAME_MAX,
      pattern: '^[^\\u0000]*$',
      description:
        'Teams whose names start with this (case-insensitive); with enable_query_team_members also teams having a member whose first_name, last_name or email starts with it',
    }),
  ),
  enable_query_team_members: Type.Optional(Type.Boolean({ description: 'Adds members and member_count to each team, and searches members with query' })),
});
export type TeamListQuery = Static<typeof TeamListQuery>;

const TeamName = Type.String({
  minLength: 1,
  maxLength: TEAM_NAME_MAX,
  pattern: '^[^\\u0000-\\u001F\\u007F]*$',
  description: 'Unique in the organization (case-insensitive)',
});
const UserIds = Type.Array(Id, { maxItems: MAX_TEAM_USER_IDS, description: 'Users of the organization who are the members (replaces the membership)' });

/** Team 2 on a fresh server: the one the create example makes (team 1 is the admin team). */
export const TeamParams = idParams(2);

export const CreateTeamBody = Type.Object(
  {
    name: TeamName,
    user_ids: Type.Optional(UserIds),
    is_admin: Type.Optional(Type.Boolean({ description: 'Only false: the organization already has its one admin team' })),
  },
  // Team 2 on a fresh server, with user 1.
  { examples: [{ name: 'Marketing', user_ids: [1] }] },
);
export type CreateTeamBody = Static<typeof CreateTeamBody>;

export const UpdateTeamBody = Type.Object(
  {
    name: Type.Optional(TeamName),
    user_ids: Type.Optional(UserIds),
    is_admin: Type.Optional(Type.Boolean({ description: 'Cannot be changed' })),
  },
  { examples: [{ name: 'Growth marketing', user_ids: [1] }] },
);
export type UpdateTeamBody = Static<typeof UpdateTeamBody>;
