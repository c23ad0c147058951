import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, dashboardApiTypes } from '../scripts/dashboard-types.ts';

/**
 * The dashboard is typed by the API it calls (docs/dashboard.md): dashboard/src/openapi.d.ts must be
 * what the current OpenAPI document gives, so that `npm run typecheck` checks the dashboard against
 * the API as it is. After an API change: `npm run dashboard:types`, then the type check.
 */
describe('the dashboard’s API types', () => {
  it('are generated from the current OpenAPI document', { timeout: 60_000 }, async () => {
    const current = await dashboardApiTypes();
    expect(current).toContain('"/dashboard/v1/session"');
    expect(fs.readFileSync(API_TYPES_FILE, 'utf8') === current, 'dashboard/src/openapi.d.ts is stale: run `npm run dashboard:types`').toBe(true);
  });
});
