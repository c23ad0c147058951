import { Type, type Static } from 'typebox';
import { IdExample, Nullable } from '../../lib/schemas.ts';

export const ApiToken = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  role: Type.String({ description: "owner, admin, editor or viewer (a user's token: the user's current role)" }),
  user_id: Nullable(Type.Integer({ description: 'The user a token acts as (made by `reelbase token create --user`); null for an organization token' })),
  user_email: Nullable(Type.String()),
  created_at: Type.Integer({ description: 'Unix seconds' }),
});
export type ApiToken = Static<typeof ApiToken>;

export const CreatedApiToken = Type.Object({
  ...ApiToken.properties,
  token: Type.String({ description: 'The secret: shown in this answer only, never again' }),
});

export const CreateApiTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001F\\u007F]*$', description: 'What the token is for' }),
    role: Type.String({ maxLength: 16, description: 'owner, admin, editor or viewer; at most the role of whoever creates it' }),
  },
  { examples: [{ name: 'CRM sync', role: 'editor' }] },
);

/** Token 2 on a fresh server: the one the create example makes (token 1 is the owner token of the first start). */
export const ApiTokenParams = Type.Object({ id: IdExample(2) });
