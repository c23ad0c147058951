import type { App, Deps } from '../../http/context.ts';
import { answerEnvelope } from '../../http/paging.ts';
import { idParams, UuidParams } from '../../lib/schemas.ts';
import {
  BreakdownQuery,
  CtaAnalytics,
  OrganizationAnalytics,
  PeriodQuery,
  PlayerAnalytics,
  PlayerBreakdown,
  PlayerSeries,
  Retention,
  SeriesQuery,
  ViewerList,
  ViewersQuery,
} from './analytics.schemas.ts';

const tags = ['analytics'];

export default async function analyticsRoutes(app: App, { config, services }: Deps) {
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
      config: { list: 'rows' },
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
      config: { list: 'rows' },
      schema: { tags, summary: "A player's figures per interval, by its uuid", params: UuidParams, querystring: SeriesQuery, response: { 200: PlayerSeries } },
    },
    async (req) => analytics.playerSeries(req.auth.organizationId, { uuid: req.params.uuid }, req.query),
  );

  app.get(
    '/v1/analytics/players/:id/breakdown',
    {
      config: { list: 'rows' },
      schema: {
        tags,
        summary: "A player's views by country, device class or browser family",
        params: idParams(1),
        querystring: BreakdownQuery,
        response: { 200: PlayerBreakdown },
      },
    },
    async (req) => analytics.playerBreakdown(req.auth.organizationId, { id: req.params.id }, req.query),
  );

  app.get(
    '/v1/analytics/players/uuid=:uuid/breakdown',
    {
      config: { list: 'rows' },
      schema: {
        tags,
        summary: "A player's views by country, device or browser, by its uuid",
        params: UuidParams,
        querystring: BreakdownQuery,
        response: { 200: PlayerBreakdown },
      },
    },
    async (req) => analytics.playerBreakdown(req.auth.organizationId, { uuid: req.params.uuid }, req.query),
  );

  app.get(
    '/v1/analytics/videos/:id/retention',
    {
      config: { list: 'points' },
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

  app.get(
    '/v1/analytics/viewers',
    {
      config: { list: 'viewers' },
      schema: {
        tags,
        summary: 'Identified viewers, the most recently seen first, with what each watched',
        querystring: ViewersQuery,
        response: { 200: ViewerList },
      },
    },
    async (req) => answerEnvelope('viewers', req.query, config.listDefaultCap, (page) => analytics.viewers(req.auth.organizationId, {}, req.query, page)),
  );

  app.get(
    '/v1/analytics/players/:id/viewers',
    {
      config: { list: 'viewers' },
      schema: {
        tags,
        summary: "A player's identified viewers, the most recently seen first",
        params: idParams(1),
        querystring: ViewersQuery,
        response: { 200: ViewerList },
      },
    },
    async (req) =>
      answerEnvelope('viewers', req.query, config.listDefaultCap, (page) =>
        analytics.viewers(req.auth.organizationId, { player: { id: req.params.id } }, req.query, page),
      ),
  );
}
