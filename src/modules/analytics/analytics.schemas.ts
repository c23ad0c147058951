import { Type, type Static } from 'typebox';

const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'An ISO date (YYYY-MM-DD), UTC', examples: ['2026-11-01'] });

/** The period of a report: whole UTC days, `to` included; by default the last 30 days. */
export const PeriodQuery = Type.Object({
  from: Type.Optional(IsoDate),
  to: Type.Optional(IsoDate),
});
export type PeriodQuery = Static<typeof PeriodQuery>;

export const PlayerAnalytics = Type.Object({
  player_id: Type.Integer(),
  from: Type.String({ description: 'First day of the period' }),
  to: Type.String({ description: 'Last day of the period (included)' }),
  loads: Type.Integer({ description: 'Player loads (pages that showed the player)' }),
  plays: Type.Integer({ description: 'Loads in which playback started' }),
  views: Type.Integer({ description: 'Chapters whose playback started (one per chapter per load)' }),
  unique_viewers: Type.Integer({ description: 'Distinct visitors among the views (an opted-out viewer counts once per load)' }),
  play_rate: Type.Number({ description: 'plays / loads (0 without loads)' }),
  completion_rate: Type.Number({ description: 'Views watched to the end (100 % of their time actually played) / views' }),
  average_view_seconds: Type.Number({ description: 'total_watch_seconds / views' }),
  total_watch_seconds: Type.Number({ description: 'Seconds of playback (what was watched again counts again; seeks count nothing)' }),
  identified_viewers: Type.Integer({ description: 'Distinct email addresses of identified views' }),
  cta_clicks: Type.Integer(),
});
export type PlayerAnalytics = Static<typeof PlayerAnalytics>;
