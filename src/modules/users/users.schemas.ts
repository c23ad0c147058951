import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { Email, IdExample, PersonName, Timestamps } from '../../lib/schemas.ts';
import { EMAIL_MAX, NAME_MAX } from '../../lib/schemas.ts';

const RoleId = Type.Integer({ minimum: 1, maximum: 4, description: '1 owner, 2 admin, 3 editor, 4 viewer (GET /v1/roles)' });

export const User = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role_id: Type.Integer(),
  role: Type.String({ description: 'owner, admin, editor or viewer' }),
  ...Timestamps,
});
export type User = Static<typeof User>;

export const UserListQuery = Type.Object({
  ...PagingQuery,
  query: Type.Optional(
    Type.String({
      maxLength: NAME_MAX,
      pattern: '^[^\\u0000]*$',
      description: 'Users whose first_name, last_name or email starts with this (case-insensitive)',
    }),
  ),
});
export type UserListQuery = Static<typeof UserListQuery>;

export const UserList = Type.Union([Type.Array(User), Type.Object({ users: Type.Array(User), summary: Summary })], {
  description: 'A bare array without per_page, {users, summary} with it',
});

/** User 1 on a fresh server (the create example: a viewer, role 4). */
export const UserParams = Type.Object({ id: IdExample(1) });
export const RoleUsersParams = Type.Object({ role_id: IdExample(4) });
export const RoleUserParams = Type.Object({ role_id: IdExample(4), id: IdExample(1) });

export const CreateUserBody = Type.Object(
  {
    email: Email,
    first_name: Type.Optional(PersonName),
    last_name: Type.Optional(PersonName),
    role_id: Type.Optional(RoleId),
  },
  // User 1 on a fresh server.
  { examples: [{ email: 'jane.doe@example.com', first_name: 'Jane', last_name: 'Doe', role_id: 4 }] },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Identifies the user (or email)' })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: EMAIL_MAX, description: 'Identifies the user (or id); case-insensitive' })),
    first_name: Type.Optional(PersonName),
    last_name: Type.Optional(PersonName),
    role_id: Type.Optional(RoleId),
  },
  { examples: [{ email: 'jane.doe@example.com', last_name: 'Smith' }] },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;
