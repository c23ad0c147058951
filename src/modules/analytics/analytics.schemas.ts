import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';

const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'An ISO date (YYYY-MM-DD), UTC', examples: ['2026-11-01'] });

/** The period of a report: whole UTC days, `to` included; by default the last 30 days. */
export const PeriodQuery = Type.Object({
  from: Type.Optional(IsoDate),
  to: Type.Optional(IsoDate),
});
export type PeriodQuery = Static<typeof PeriodQuery>;

const Period = {
  from: Type.String({ description: 'First day of the period' }),
  to: Type.String({ description: 'Last day of the period (included)' }),
};

const Figures = {
  loads: Type.Integer({ description: 'Player loads (pages that showed the player)' }),
  plays: Type.Integer({ description: 'Loads whose playback first started in the period' }),
  views: Type.Integer({ description: 'Chapters whose playback started (one per chapter per load)' }),
  unique_viewers: Type.Integer({
    description: 'Distinct visitors among the views (an opted-out viewer counts once per load); exact up to 2,730, estimated beyond (about 1 %)',
  }),
  play_rate: Type.Number({ description: 'plays / loads (0 without loads)' }),
  completion_rate: Type.Number({ description: 'Views watched to the end (100 % of their time actually played) / views' }),
  average_view_seconds: Type.Number({ description: 'total_watch_seconds / views' }),
  total_watch_seconds: Type.Number({ description: 'Seconds of playback (what was watched again counts again; seeks count nothing)' }),
  identified_viewers: Type.Integer({ description: 'Distinct email addresses of identified views; exact up to 2,730, estimated beyond (about 1 %)' }),
  cta_clicks: Type.Integer(),
};

export const PlayerAnalytics = Type.Object({ player_id: Type.Integer(), ...Period, ...Figures });
export type PlayerAnalytics = Static<typeof PlayerAnalytics>;

export const Interval = Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]);
export type Interval = Static<typeof Interval>;

export const SeriesQuery = Type.Object({
  ...PeriodQuery.properties,
  interval: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], {
      description: 'Default day; hour covers at most 31 days',
    }),
  ),
});

export const PlayerSeries = Type.Object({
  player_id: Type.Integer(),
  ...Period,
  interval: Interval,
  rows: Type.Array(
    Type.Object({
      start: Type.String({ description: 'Start of the interval (UTC; weeks start on Monday)' }),
      loads: Type.Integer(),
      plays: Type.Integer(),
      views: Type.Integer(),
      unique_viewers: Type.Integer(),
      total_watch_seconds: Type.Number(),
      identified_viewers: Type.Integer(),
      cta_clicks: Type.Integer(),
    }),
  ),
});
export type PlayerSeries = Static<typeof PlayerSeries>;

export const CtaAnalytics = Type.Object({
  cta_id: Type.Integer(),
  ...Period,
  impressions: Type.Integer({ description: 'Loads in which the CTA was shown' }),
  clicks: Type.Integer({ description: 'Loads in which a link of the CTA was clicked' }),
  click_through_rate: Type.Number({ description: 'clicks / impressions' }),
});
export type CtaAnalytics = Static<typeof CtaAnalytics>;

export const Retention = Type.Object({
  video_id: Type.Integer(),
  ...Period,
  duration: Type.Number({ description: "The video's length in seconds" }),
  views: Type.Integer({ description: 'Views the curve is computed from (one per chapter per load)' }),
  interval_seconds: Type.Number({ description: 'Seconds between points: 1, or duration / 200 for videos longer than 10 minutes' }),
  points: Type.Array(Type.Object({ second: Type.Number(), share: Type.Number({ description: 'Share of the views still watching there (0..1)' }) })),
  drop_offs: Type.Array(Type.Object({ second: Type.Number(), share_lost: Type.Number() }), { description: 'The three points where most viewers left' }),
});
export type Retention = Static<typeof Retention>;

export const OrganizationAnalytics = Type.Object({
  ...Period,
  ...Figures,
  top_players: Type.Array(
    Type.Object({ player_id: Type.Integer(), uuid: Type.String(), name: Type.String(), views: Type.Integer(), total_watch_seconds: Type.Number() }),
    { description: 'The ten players with the most views in the period' },
  ),
});
export type OrganizationAnalytics = Static<typeof OrganizationAnalytics>;

export const ViewersQuery = Type.Object({
  ...PeriodQuery.properties,
  ...PagingQuery,
  email: Type.Optional(
    Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'Only this address (case-insensitive)' }),
  ),
});
export type ViewersQuery = Static<typeof ViewersQuery>;

export const IdentifiedViewer = Type.Object({
  email: Type.String(),
  first_seen: Type.Integer({ description: 'Unix seconds: the first identified view of the period' }),
  last_seen: Type.Integer({ description: 'Unix seconds: the latest identified view of the period' }),
  loads: Type.Integer({ description: 'Player loads in which the address was given' }),
  total_watch_seconds: Type.Number({ description: 'Seconds of playback in those loads' }),
  players: Type.Array(
    Type.Object({
      player_id: Type.Integer(),
      uuid: Type.String(),
      name: Type.String(),
      views: Type.Integer(),
      total_watch_seconds: Type.Number(),
      furthest_percent: Type.Union([Type.Integer(), Type.Null()], { description: 'The furthest view milestone reached (0, 25, 50, 75, 100)' }),
    }),
  ),
});
export type IdentifiedViewer = Static<typeof IdentifiedViewer>;

export const ViewerList = Type.Object({ viewers: Type.Array(IdentifiedViewer), summary: Summary });

export const BreakdownQuery = Type.Object({
  ...PeriodQuery.properties,
  by: Type.Union([Type.Literal('country'), Type.Literal('device'), Type.Literal('browser')], {
    description: 'country: ISO 3166 code, null when unknown (no GeoIP database); device: desktop, mobile, tablet, tv, other; browser: its family',
    examples: ['country'],
  }),
});
export type BreakdownQuery = Static<typeof BreakdownQuery>;

export const PlayerBreakdown = Type.Object({
  player_id: Type.Integer(),
  ...Period,
  by: Type.String(),
  rows: Type.Array(
    Type.Object({
      value: Type.Union([Type.String(), Type.Null()], { description: 'The country (ISO code), device class or browser family; null when unknown' }),
      views: Type.Integer({ description: 'Starts of playback' }),
      unique_viewers: Type.Integer({ description: 'Distinct visitors among those views; exact up to 2,730, estimated beyond (about 1 %)' }),
    }),
    { description: 'Most views first, then the unknown last, then by value' },
  ),
});
export type PlayerBreakdown = Static<typeof PlayerBreakdown>;
