import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { Nullable, idParams } from '../../lib/schemas.ts';

export const MESSAGE_MAX = 1000;
export const DISPLAY_NAME_MAX = 255;
export const DOMAINS_MAX = 100;

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
/** One line of text: no control characters (it ends up in a mail header). */
const Line = (maxLength: number) => Type.String({ maxLength, pattern: '^[^\\u0000-\\u001F\\u007F]*$' });
/** Free text: no control characters except tab and line breaks. */
const Text = (maxLength: number) => Type.String({ maxLength, pattern: '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$' });

export const AccessManager = Type.Object({
  id: Type.Integer(),
  player_id: Type.Integer(),
  player_uuid: Type.String(),
  moderator_id: Nullable(Type.Integer({ description: 'A user of the organization who approves access requests' })),
  enabled: Type.Boolean(),
  custom_sender_display_name: Nullable(Type.String()),
  custom_approval_message: Nullable(Type.String()),
  custom_denial_message: Nullable(Type.String()),
  whitelisted_domains_enabled: Type.Boolean(),
  whitelisted_domains: Type.Array(Type.String(), { description: 'Lower-case hostnames' }),
  max_access_code_uses: Nullable(Type.Integer({ description: 'null: unlimited' })),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
});
export type AccessManager = Static<typeof AccessManager>;

export const AccessManagerListQuery = Type.Object({
  ...PagingQuery,
  player_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "Only this player's access manager" })),
});
export type AccessManagerListQuery = Static<typeof AccessManagerListQuery>;

export const AccessManagerList = Type.Union([Type.Array(AccessManager), Type.Object({ access_managers: Type.Array(AccessManager), summary: Summary })], {
  description: 'A bare array without per_page, {access_managers, summary} with it',
});

/** Player 1's access manager on a fresh server (made when the access managers are first listed). */
export const AccessManagerParams = idParams(1);

export const UpdateAccessManagerBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    moderator_id: Type.Optional(Nullable(Id)),
    custom_sender_display_name: Type.Optional(Nullable(Line(DISPLAY_NAME_MAX))),
    custom_approval_message: Type.Optional(Nullable(Text(MESSAGE_MAX))),
    custom_denial_message: Type.Optional(Nullable(Text(MESSAGE_MAX))),
    whitelisted_domains_enabled: Type.Optional(Type.Boolean()),
    whitelisted_domains: Type.Optional(
      Type.Union([
        Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: DOMAINS_MAX }),
        Type.String({ maxLength: DOMAINS_MAX * 254, description: 'comma-separated' }),
      ]),
    ),
    max_access_code_uses: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2147483647 }))),
  },
  {
    examples: [
      {
        enabled: true,
        moderator_id: 1,
        custom_sender_display_name: 'Acme Video Team',
        whitelisted_domains_enabled: true,
        whitelisted_domains: ['example.com'],
        max_access_code_uses: 100,
      },
    ],
  },
);
export type UpdateAccessManagerBody = Static<typeof UpdateAccessManagerBody>;
