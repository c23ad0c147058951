import { Type, type Static } from 'typebox';
import { Permissions } from './permissions.ts';

export const RoleObject = Type.Object({
  id: Type.Integer({ description: '1 owner, 2 admin, 3 editor, 4 viewer' }),
  name: Type.String(),
  permissions: Type.Array(Type.String({ enum: [...Permissions] }), { description: 'What the role may do (see docs/accounts.md)' }),
});
export type RoleObject = Static<typeof RoleObject>;

export const RoleList = Type.Array(RoleObject);
export const RoleParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647, examples: [3] }) });
