/**
 * The permission matrix: one table for the whole API. Routes name the permission they need
 * (route config `permission`, default `content:read` for GET and `content:write` otherwise).
 */
export const Permissions = [
  'content:read',
  'content:write',
  'live:manage',
  'users:manage',
  'teams:manage',
  'webhooks:manage',
  'security:manage',
  'org:manage',
] as const;

export type Permission = (typeof Permissions)[number];

export const Roles = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof Roles)[number];

const viewer: Permission[] = ['content:read'];
const editor: Permission[] = [...viewer, 'content:write', 'live:manage'];
const admin: Permission[] = [...editor, 'users:manage', 'teams:manage', 'webhooks:manage', 'security:manage'];
const owner: Permission[] = [...admin, 'org:manage'];

export const RolePermissions: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(owner),
  admin: new Set(admin),
  editor: new Set(editor),
  viewer: new Set(viewer),
};

/** Stable public ids of the roles (`/v1/roles/:id`, users' `role_id`). */
export const RoleIds: Record<Role, number> = { owner: 1, admin: 2, editor: 3, viewer: 4 };

export function roleById(id: number): Role | undefined {
  return Roles.find((r) => RoleIds[r] === id);
}

/** Roles ordered by power: a role may grant only roles at most as powerful as itself. */
export function outranksOrEquals(role: Role, other: Role): boolean {
  return RoleIds[role] <= RoleIds[other];
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (Roles as readonly string[]).includes(value);
}

export function can(role: Role, permission: Permission): boolean {
  return RolePermissions[role].has(permission);
}
