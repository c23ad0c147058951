import type { Role } from '../roles/permissions.ts';

/** Who a request acts for: the token's organization, user and role. */
export interface AuthContext {
  tokenId: number;
  organizationId: number;
  userId: number | null;
  role: Role;
}
