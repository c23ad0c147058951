import { Type, type Static } from 'typebox';
import { IdExample, PLAYER_UUID_EXAMPLE } from '../../lib/schemas.ts';

/** What an allotment counts: users, teams, embed-enabled players. */
export const AllotmentTypes = ['govideo_users', 'teams', 'embeds'] as const;
export type AllotmentType = (typeof AllotmentTypes)[number];
/** Returned when `types` is not given (the spec's object has these two members). */
export const DefaultAllotmentTypes: AllotmentType[] = ['govideo_users', 'teams'];

export const MAX_LIMIT = 2_147_483_647;

export const AllotmentUsage = Type.Object({
  current_usage: Type.Integer(),
  limit: Type.Integer({ description: '0 with enforced false: unlimited' }),
  grace_limit: Type.Integer({ description: 'How far past limit creations are still accepted when enforced' }),
  enforced: Type.Boolean({ description: 'When true, creations past limit + grace_limit answer 403 allotment_exceeded' }),
});
export type AllotmentUsage = Static<typeof AllotmentUsage>;

export const AllotmentsResponse = Type.Object({
  govideo_users: Type.Optional(AllotmentUsage),
  teams: Type.Optional(AllotmentUsage),
  embeds: Type.Optional(AllotmentUsage),
});
export type AllotmentsResponse = Static<typeof AllotmentsResponse>;

/** The token's organization: 1 on a fresh server. */
export const AllotmentsParams = Type.Object({ organization_id: IdExample(1) });

export const AllotmentsQuery = Type.Object({
  types: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 10,
      description: `Which allotments to return: ${AllotmentTypes.join(', ')} (types[]=a&types[]=b, types=a&types=b or types=a,b); default govideo_users and teams`,
    }),
  ),
});
export type AllotmentsQuery = Static<typeof AllotmentsQuery>;

/** One allotment's limits as written by PATCH /v1/organizations/:id (`allotments.<type>`) and the CLI. */
export const AllotmentLimitInput = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIMIT })),
  grace_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIMIT })),
  enforced: Type.Optional(Type.Boolean()),
});
export type AllotmentLimitInput = Static<typeof AllotmentLimitInput>;

export const AllotmentLimitsInput = Type.Object(
  {
    govideo_users: Type.Optional(AllotmentLimitInput),
    teams: Type.Optional(AllotmentLimitInput),
    embeds: Type.Optional(AllotmentLimitInput),
  },
  { additionalProperties: false, description: 'Allotment limits to set, by type' },
);
export type AllotmentLimitsInput = Static<typeof AllotmentLimitsInput>;

export const EmbedParams = Type.Object({ uuid: Type.String({ minLength: 1, maxLength: 64, examples: [PLAYER_UUID_EXAMPLE] }) });

export const EmbedResult = Type.Object({
  success: Type.Boolean(),
  embed_enabled: Type.Boolean(),
});

export const EmbedState = Type.Object({ embed_enabled: Type.Boolean() });
