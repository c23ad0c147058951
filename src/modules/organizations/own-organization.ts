import { notFound } from '../../lib/errors.ts';

/**
 * For paths under /v1/organizations/:id that act on the token's own organization only: any other id
 * is answered like a missing organization (404).
 */
export function assertOwnOrganization(pathId: number, organizationId: number): void {
  if (pathId !== organizationId) throw notFound('organization', pathId);
}
