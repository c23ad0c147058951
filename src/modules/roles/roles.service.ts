import { notFound } from '../../lib/errors.ts';
import { Permissions, RoleIds, RolePermissions, Roles, roleById, type Role } from './permissions.ts';
import type { RoleObject } from './roles.schemas.ts';

/** Roles are fixed (the matrix in permissions.ts); this only shapes them for the wire. */
export class RolesService {
  toWire(role: Role): RoleObject {
    return { id: RoleIds[role], name: role, permissions: Permissions.filter((p) => RolePermissions[role].has(p)) };
  }

  list(): RoleObject[] {
    return [...Roles].sort((a, b) => RoleIds[a] - RoleIds[b]).map((r) => this.toWire(r));
  }

  get(id: number): RoleObject {
    const role = roleById(id);
    if (!role) throw notFound('role', id);
    return this.toWire(role);
  }
}
