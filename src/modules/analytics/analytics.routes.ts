import type { App, Deps } from '../../http/context.ts';
import { idParams, UuidParams } from '../../lib/schemas.ts';
import { CtaAnalytics, OrganizationAnalytics, PeriodQuery, PlayerAnalytics, PlayerSeries, Retention, SeriesQuery } from './analytics.schemas.ts';

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

  app.get(
    '/v1/analytics/players/:id/timeseries',
    {
      schema: {
        tags,
        summary: "A player's figures per hour, day, week or month of a period",
        params: idParams(1),
        querystring: SeriesQuery,
        response: { 200: PlayerSeries },
      },
    },
    async (req) => analytics.playerSeries(req.auth.organizationId, { id: req.params.id }, req.query),
  );

  app.get(
    '/v1/analytics/players/uuid=:uuid/timeseries',
    {
      schema: { tags, summary: "A player's figures per interval, by its uuid", params: UuidParams, querystring: SeriesQuery, response: { 200: PlayerSeries } },
    },
    async (req) => analytics.playerSeries(req.auth.organizationId, { uuid: req.params.uuid }, req.query),
  );

  app.get(
    '/v1/analytics/videos/:id/retention',
    {
      schema: {
        tags,
        summary: "A video's audience retention curve and its drop-off points",
        params: idParams(1),
        querystring: PeriodQuery,
        response: { 200: Retention },
      },
    },
    async (req) => analytics.retention(req.auth.organizationId, req.params.id, req.query),
  );

  app.get(
    '/v1/analytics/ctas/:id',
    {
      schema: {
        tags,
        summary: "A CTA's impressions, clicks and click-through rate",
        params: idParams(1),
        querystring: PeriodQuery,
        response: { 200: CtaAnalytics },
      },
    },
    async (req) => analytics.ctaSummary(req.auth.organizationId, req.params.id, req.query),
  );

  app.get(
    '/v1/analytics/summary',
    { schema: { tags, summary: "The organization's figures and its most viewed players", querystring: PeriodQuery, response: { 200: OrganizationAnalytics } } },
    async (req) => analytics.organizationSummary(req.auth.organizationId, req.query),
  );
}
