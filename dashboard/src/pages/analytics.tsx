import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Chart } from '../components/chart.tsx';
import { FormError } from '../components/field.tsx';
import { lastDays, PeriodPicker, type Period } from '../components/period.tsx';
import { downloadCsv } from '../download.ts';
import { duration } from '../format.ts';
import type { paths } from '../openapi.d.ts';

type Json<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;
type Figures = Json<'/dashboard/v1/analytics/summary'>;
type Series = Json<'/dashboard/v1/analytics/players/{id}/timeseries'>;
type Retention = Json<'/dashboard/v1/analytics/videos/{id}/retention'>;
type Viewers = Json<'/dashboard/v1/analytics/viewers'>;
type Player = Json<'/dashboard/v1/players/{id}'>;

const percent = (v: number) => `${Math.round(v * 1000) / 10} %`;
const whole = (v: number) => Math.round(v).toLocaleString();

/** The figures every report has, as cards. */
function FigureCards({ f }: { f: Omit<Figures, 'top_players' | 'from' | 'to'> }) {
  const cards: Array<[string, string]> = [
    ['Views', whole(f.views)],
    ['Unique viewers', whole(f.unique_viewers)],
    ['Plays', whole(f.plays)],
    ['Play rate', percent(f.play_rate)],
    ['Completion rate', percent(f.completion_rate)],
    ['Average view', duration(f.average_view_seconds)],
    ['Watch time', duration(f.total_watch_seconds)],
    ['Identified viewers', whole(f.identified_viewers)],
    ['CTA clicks', whole(f.cta_clicks)],
  ];
  return (
    <dl class="figures">
      {cards.map(([label, value]) => (
        <div class="figure" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Identified viewers (email gate, identified views): who watched what, for how long; newest first. */
function ViewerTable({ viewers }: { viewers: Viewers['viewers'] }) {
  if (viewers.length === 0) return <p class="muted">No identified viewer in this period.</p>;
  return (
    <table class="table">
      <caption class="visually-hidden">Identified viewers</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Watched</th>
          <th scope="col">Watch time</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        {viewers.map((v) => (
          <tr key={v.email}>
            <td>{v.email}</td>
            <td>{v.players.map((p) => `${p.name}${p.furthest_percent === null ? '' : ` (${p.furthest_percent} %)`}`).join(', ')}</td>
            <td>{duration(v.total_watch_seconds)}</td>
            <td>{new Date(v.last_seen * 1000).toLocaleString()}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The organization's analytics: totals, top players, identified viewers, for a period. */
export function Analytics() {
  const [period, setPeriod] = useState<Period>(() => lastDays(30));
  const [summary, setSummary] = useState<Figures | null>(null);
  const [viewers, setViewers] = useState<Viewers['viewers']>([]);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    const query = { from: period.from, to: period.to };
    void api.GET('/dashboard/v1/analytics/summary', { params: { query } }).then(({ data, error }) => {
      if (data) setSummary(data);
      else setProblem(problemOf(error).message);
    });
    void api.GET('/dashboard/v1/analytics/viewers', { params: { query: { ...query, per_page: 50 } } }).then(({ data }) => setViewers(data?.viewers ?? []));
  }, [period]);

  return (
    <section class="page">
      <header class="page__header">
        <h1>Analytics</h1>
        <PeriodPicker value={period} onChange={setPeriod} />
      </header>
      <FormError message={problem} />
      <p class="muted small">
        The organization's totals are brought up to date every half minute (ANALYTICS_ROLLUP_SECONDS); a player's own report is exact at once.
      </p>
      {summary ? <FigureCards f={summary} /> : <p aria-busy="true">Loading…</p>}
      <section class="card" aria-labelledby="top-title">
        <h2 id="top-title">Top players</h2>
        {summary && summary.top_players.length > 0 ? (
          <table class="table">
            <caption class="visually-hidden">The players with the most views</caption>
            <thead>
              <tr>
                <th scope="col">Player</th>
                <th scope="col">Views</th>
                <th scope="col">Watch time</th>
              </tr>
            </thead>
            <tbody>
              {summary.top_players.map((p) => (
                <tr key={p.player_id}>
                  <td>
                    <Link href={`/players/${p.player_id}/analytics`}>{p.name}</Link>
                  </td>
                  <td>{whole(p.views)}</td>
                  <td>{duration(p.total_watch_seconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No views in this period.</p>
        )}
      </section>
      <section class="card" aria-labelledby="viewers-title">
        <div class="card__header">
          <h2 id="viewers-title">Identified viewers</h2>
          <button
            class="button button--small"
            type="button"
            onClick={() =>
              void downloadCsv(`/dashboard/v1/analytics/viewers?from=${period.from}&to=${period.to}&per_page=200`, `viewers-${period.from}-${period.to}.csv`)
            }
          >
            Export CSV
          </button>
        </div>
        <ViewerTable viewers={viewers} />
      </section>
    </section>
  );
}

/** One player's analytics: figures, views over time, each chapter's retention, CTA clicks, identified viewers. */
export function PlayerAnalytics({ id }: { id: number }) {
  const [period, setPeriod] = useState<Period>(() => lastDays(30));
  const [player, setPlayer] = useState<Player | null>(null);
  const [figures, setFigures] = useState<Json<'/dashboard/v1/analytics/players/{id}'> | null>(null);
  const [series, setSeries] = useState<Series | null>(null);
  const [retention, setRetention] = useState<Retention[]>([]);
  const [ctas, setCtas] = useState<Array<Json<'/dashboard/v1/analytics/ctas/{id}'> & { html: string }>>([]);
  const [viewers, setViewers] = useState<Viewers['viewers']>([]);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    void api.GET('/dashboard/v1/players/{id}', { params: { path: { id } } }).then(({ data }) => setPlayer(data ?? null));
  }, [id]);

  useEffect(() => {
    if (!player) return;
    const query = { from: period.from, to: period.to };
    const path = { id };
    const interval = (Date.parse(period.to) - Date.parse(period.from)) / 86_400_000 < 3 ? 'hour' : 'day';
    void api
      .GET('/dashboard/v1/analytics/players/{id}', { params: { path, query } })
      .then(({ data, error }) => (data ? setFigures(data) : setProblem(problemOf(error).message)));
    void api
      .GET('/dashboard/v1/analytics/players/{id}/timeseries', { params: { path, query: { ...query, interval } } })
      .then(({ data }) => setSeries(data ?? null));
    void api
      .GET('/dashboard/v1/analytics/players/{id}/viewers', { params: { path, query: { ...query, per_page: 50 } } })
      .then(({ data }) => setViewers(data?.viewers ?? []));
    void Promise.all(
      player.chapters_attributes.map((c) =>
        api.GET('/dashboard/v1/analytics/videos/{id}/retention', { params: { path: { id: c.video_id }, query } }).then(({ data }) => data),
      ),
    ).then((all) => setRetention(all.filter((r): r is Retention => !!r)));
    void api.GET('/dashboard/v1/players/{id}/ctas', { params: { path, query: { per_page: 50 } } }).then(async ({ data }) => {
      const list = data ? (Array.isArray(data) ? data : data.ctas) : [];
      const rows = await Promise.all(
        list.map((c) =>
          api.GET('/dashboard/v1/analytics/ctas/{id}', { params: { path: { id: c.id }, query } }).then(({ data: a }) => (a ? { ...a, html: c.html } : null)),
        ),
      );
      setCtas(rows.filter((r): r is NonNullable<typeof r> => !!r));
    });
  }, [player, period, id]);

  const overTime = useMemo(() => {
    if (!series) return null;
    return {
      x: series.rows.map((r) => Date.parse(r.start) / 1000),
      series: [
        { label: 'Views', values: series.rows.map((r) => r.views), color: '#3451d1', format: whole },
        { label: 'Unique viewers', values: series.rows.map((r) => r.unique_viewers), color: '#12633a', format: whole },
        { label: 'CTA clicks', values: series.rows.map((r) => r.cta_clicks), color: '#b45309', format: whole },
      ],
    };
  }, [series]);

  if (!player) return <section class="page" aria-busy="true" />;
  const chapterName = (videoId: number) => player.chapters_attributes.find((c) => c.video_id === videoId)?.video_attributes.name ?? `Video ${videoId}`;
  return (
    <section class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/players">Players</Link> / <Link href={`/players/${id}`}>{player.name}</Link> / <span aria-current="page">Analytics</span>
      </nav>
      <header class="page__header">
        <h1>Analytics: {player.name}</h1>
        <PeriodPicker value={period} onChange={setPeriod} />
      </header>
      <FormError message={problem} />
      {figures ? <FigureCards f={figures} /> : <p aria-busy="true">Loading…</p>}
      <section class="card">
        <div class="card__header">
          <h2>Views over time</h2>
          <button
            class="button button--small"
            type="button"
            onClick={() =>
              void downloadCsv(
                `/dashboard/v1/analytics/players/${id}/timeseries?from=${period.from}&to=${period.to}`,
                `player-${id}-${period.from}-${period.to}.csv`,
              )
            }
          >
            Export CSV
          </button>
        </div>
        {overTime ? <Chart title={`Views of ${player.name} by ${series!.interval}`} x={overTime.x} series={overTime.series} counts /> : null}
      </section>
      {retention.map((r) => (
        <section class="card" key={r.video_id}>
          <h2>Audience retention: {chapterName(r.video_id)}</h2>
          {r.views === 0 ? (
            <p class="muted">No views of this chapter in the period.</p>
          ) : (
            <>
              <Chart
                title={`Share of the ${r.views} views still watching, by second`}
                xTime={false}
                x={r.points.map((p) => p.second)}
                series={[{ label: 'Still watching', values: r.points.map((p) => p.share * 100), color: '#3451d1', format: (v) => `${Math.round(v)} %` }]}
              />
              {r.drop_offs.length > 0 ? (
                <p class="small">Most left at {r.drop_offs.map((d) => `${duration(d.second)} (${percent(d.share_lost)})`).join(', ')}.</p>
              ) : null}
            </>
          )}
        </section>
      ))}
      <section class="card">
        <h2>Call-to-actions</h2>
        {ctas.length === 0 ? (
          <p class="muted">This player has no CTA.</p>
        ) : (
          <table class="table">
            <caption class="visually-hidden">Impressions and clicks of each CTA</caption>
            <thead>
              <tr>
                <th scope="col">CTA</th>
                <th scope="col">Impressions</th>
                <th scope="col">Clicks</th>
                <th scope="col">Click-through</th>
              </tr>
            </thead>
            <tbody>
              {ctas.map((c) => (
                <tr key={c.cta_id}>
                  <td>
                    {c.html
                      .replace(/<[^>]*>/g, ' ')
                      .replace(/\s+/g, ' ')
                      .trim()
                      .slice(0, 60) || `CTA ${c.cta_id}`}
                  </td>
                  <td>{whole(c.impressions)}</td>
                  <td>{whole(c.clicks)}</td>
                  <td>{percent(c.click_through_rate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section class="card">
        <h2>Identified viewers</h2>
        <ViewerTable viewers={viewers} />
      </section>
    </section>
  );
}
