import type { Role } from '../roles/permissions.ts';

/** Who a request acts for: the token's (or the signed-in user's) organization, user and role. */
export interface AuthContext {
  /** null for a signed-in person's session. */
  tokenId: number | null;
  organizationId: number;
  userId: number | null;
  role: Role;
}
