import type { App, Deps } from '../../http/context.ts';
import { idParams, UuidParams } from '../../lib/schemas.ts';
import { PeriodQuery, PlayerAnalytics } from './analytics.schemas.ts';

const tags = ['analytics'];

export default async function analyticsRoutes(app: App, { services }: Deps) {
  const analytics = services.analytics;

  app.get(
    '/v1/analytics/players/:id',
    {
      schema: {
        tags,
        summary: "A player's viewing figures for a period (default: the last 30 days)",
        params: idParams(1),
        querystring: PeriodQuery,
        response: { 200: PlayerAnalytics },
      },
    },
    async (req) => analytics.playerSummary(req.auth.organizationId, { id: req.params.id }, req.query),
  );

  app.get(
    '/v1/analytics/players/uuid=:uuid',
    { schema: { tags, summary: "A player's viewing figures, by its uuid", params: UuidParams, querystring: PeriodQuery, response: { 200: PlayerAnalytics } } },
    async (req) => analytics.playerSummary(req.auth.organizationId, { uuid: req.params.uuid }, req.query),
  );
}
