import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Chart } from '../components/chart.tsx';
import { CopyField } from '../components/copy.tsx';
import { Field, FormError } from '../components/field.tsx';
import { date } from '../format.ts';
import type { paths } from '../openapi.d.ts';
import { mayWrite, session } from '../session.ts';

type Detail =
  paths['/dashboard/v1/organizations/{current_organization_id}/live/{live_stream_instance_id}']['get']['responses'][200]['content']['application/json'];
type Health =
  paths['/dashboard/v1/organizations/{current_organization_id}/live/{live_stream_instance_id}/health']['get']['responses'][200]['content']['application/json'];
type Item =
  paths['/dashboard/v1/organizations/{current_organization_id}/live']['get']['responses'][200]['content']['application/json']['stream_instances'][number];

const STATUS: Record<string, { text: string; tone: 'ok' | 'busy' | 'bad' | 'idle' }> = {
  unaired: { text: 'Not started', tone: 'idle' },
  live: { text: 'Live', tone: 'bad' },
  processing: { text: 'Making the recording', tone: 'busy' },
  ready: { text: 'Recording ready', tone: 'ok' },
};
const statusOf = (s: string) => STATUS[s] ?? { text: s, tone: 'idle' as const };

/** The organization's live streams, newest first; a new one. */
export function LiveStreams() {
  const org = session.value!.organization.id;
  const [, navigate] = useLocation();
  const [items, setItems] = useState<Item[] | null>(null);
  const [form, setForm] = useState({ name: '', description: '', tags: '', air: '', segment: '4', dvr: false });
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const writable = mayWrite(session.value);

  useEffect(() => {
    void api
      .GET('/dashboard/v1/organizations/{current_organization_id}/live', {
        params: { path: { current_organization_id: org }, query: { per_page: 50, order_by: 'created_at', direction: 'desc' } },
      })
      .then(({ data, error }) => (data ? setItems(data.stream_instances) : setProblem(problemOf(error).message)));
  }, [org]);

  async function create(event: Event) {
    event.preventDefault();
    setFields({});
    setProblem(null);
    const { data, error } = await api.POST('/dashboard/v1/organizations/{current_organization_id}/live', {
      params: { path: { current_organization_id: org } },
      body: {
        video_options: {
          video_name: form.name,
          description: form.description,
          stream_tags: form.tags
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
          ...(form.air ? { air_date: new Date(form.air).toISOString() } : {}),
          segment_length: Number(form.segment) as 1 | 4 | 10,
          dvr_enabled: form.dvr,
        },
      },
    });
    if (data) return navigate(`/live/${data.stream_instance_id}`);
    const p = problemOf(error);
    // The API names the fields under video_options.
    setFields(Object.fromEntries(Object.entries(p.fields).map(([k, v]) => [k.replace(/^video_options[./]/, ''), v])));
    setProblem(p.message);
  }

  return (
    <section class="page">
      <header class="page__header">
        <h1>Live</h1>
      </header>
      {writable ? (
        <form class="card stack" onSubmit={(e) => void create(e)} aria-labelledby="new-live-title">
          <h2 id="new-live-title">New live stream</h2>
          <div class="field-row">
            <Field label="Name" required value={form.name} error={fields.video_name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
            <Field
              label="Tags"
              hint="Comma-separated."
              value={form.tags}
              error={fields.stream_tags}
              onInput={(e) => setForm({ ...form, tags: e.currentTarget.value })}
            />
          </div>
          <Field
            label="Description"
            value={form.description}
            error={fields.description}
            onInput={(e) => setForm({ ...form, description: e.currentTarget.value })}
          />
          <div class="field-row field-row--4">
            <Field
              label="Air date"
              type="datetime-local"
              value={form.air}
              error={fields.air_date}
              onInput={(e) => setForm({ ...form, air: e.currentTarget.value })}
            />
            <div class="field">
              <label for="segment">Segment length</label>
              <select id="segment" value={form.segment} onChange={(e) => setForm({ ...form, segment: e.currentTarget.value })}>
                <option value="1">1 s (lowest delay)</option>
                <option value="4">4 s</option>
                <option value="10">10 s</option>
              </select>
            </div>
            <label class="check check--field">
              <input type="checkbox" checked={form.dvr} onChange={(e) => setForm({ ...form, dvr: e.currentTarget.checked })} /> DVR (viewers can rewind)
            </label>
          </div>
          <div class="form-actions">
            <button class="button button--primary" type="submit">
              Create stream
            </button>
          </div>
        </form>
      ) : null}
      <FormError message={problem} />
      {items === null ? (
        <p aria-busy="true">Loading…</p>
      ) : items.length === 0 ? (
        <p class="empty">No live streams yet.</p>
      ) : (
        <table class="table">
          <caption class="visually-hidden">Live streams, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Air date</th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr key={i.id}>
                <td>
                  <Link href={`/live/${i.id}`}>{i.name}</Link>
                </td>
                <td>
                  <span class={`badge badge--${statusOf(i.status).tone}`}>{statusOf(i.status).text}</span>
                </td>
                <td>{i.air_date ? date(i.air_date) : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

interface Sample {
  at: number;
  kbps: number;
  fps: number;
}

/**
 * A live stream: where to publish (ingest URL and key, the key hidden until revealed), its status
 * and health while the encoder publishes (polled every 2 s, with small charts of bitrate and frame
 * rate), a preview of its player, and the recording once it is ready.
 */
export function LiveStreamPage({ id }: { id: number }) {
  const org = session.value!.organization.id;
  const [detail, setDetail] = useState<Detail | null | undefined>(undefined);
  const [health, setHealth] = useState<Health | null>(null);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [reveal, setReveal] = useState(false);
  const lastSample = useRef('');
  const path = { current_organization_id: org, live_stream_instance_id: id };

  const poll = useCallback(async () => {
    const [d, h] = await Promise.all([
      api.GET('/dashboard/v1/organizations/{current_organization_id}/live/{live_stream_instance_id}', { params: { path } }),
      api.GET('/dashboard/v1/organizations/{current_organization_id}/live/{live_stream_instance_id}/health', { params: { path } }),
    ]);
    setDetail(d.data ?? null);
    const primary = h.data?.primary;
    setHealth(h.data ?? null);
    if (primary && primary.created_at !== lastSample.current) {
      lastSample.current = primary.created_at;
      setSamples((all) => [
        ...all.slice(-89),
        { at: Date.parse(primary.created_at) / 1000, kbps: (primary.video_bit_rate ?? 0) / 1000, fps: primary.video_r_frame_rate ?? 0 },
      ]);
    }
  }, [id, org]);

  useEffect(() => {
    void poll();
    const timer = setInterval(() => void poll(), 2000);
    return () => clearInterval(timer);
  }, [poll]);

  if (detail === undefined) return <section class="page" aria-busy="true" />;
  if (detail === null) {
    return (
      <section class="page">
        <h1>No such live stream</h1>
        <Link href="/live">Back to live streams</Link>
      </section>
    );
  }
  const i = detail.instance_details;
  const status = statusOf(i.status);
  const primary = health?.primary ?? null;
  return (
    <section class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/live">Live</Link> / <span aria-current="page">{i.name}</span>
      </nav>
      <header class="page__header">
        <h1>{i.name}</h1>
        <span class={`badge badge--${status.tone} badge--large`} role="status" aria-live="polite">
          {status.text}
        </span>
      </header>
      <div class="columns">
        <div class="stack">
          <section class="card" aria-labelledby="live-preview-title">
            <h2 id="live-preview-title">Preview</h2>
            <div class="preview">
              <iframe src={`/embed/${i.player_uuid}`} title={`Preview of ${i.name}`} allow="autoplay; fullscreen; picture-in-picture" allowFullScreen />
            </div>
          </section>
          <section class="card" aria-labelledby="health-title">
            <h2 id="health-title">Health</h2>
            {primary ? (
              <>
                <dl class="figures figures--small">
                  <div class="figure">
                    <dt>Bitrate</dt>
                    <dd>{Math.round((primary.video_bit_rate ?? 0) / 1000)} kb/s</dd>
                  </div>
                  <div class="figure">
                    <dt>Frame rate</dt>
                    <dd>{primary.video_r_frame_rate ?? '–'} fps</dd>
                  </div>
                  <div class="figure">
                    <dt>Resolution</dt>
                    <dd>{primary.video_width && primary.video_height ? `${primary.video_width}×${primary.video_height}` : '–'}</dd>
                  </div>
                  <div class="figure">
                    <dt>Codecs</dt>
                    <dd class="small">{[primary.video_codec_name, primary.audio_codec_name].filter(Boolean).join(' / ') || '–'}</dd>
                  </div>
                </dl>
                {samples.length > 1 ? (
                  <div class="field-row">
                    <Chart
                      title="Video bitrate (kb/s)"
                      height={140}
                      x={samples.map((s) => s.at)}
                      series={[{ label: 'kb/s', values: samples.map((s) => s.kbps), color: '#3451d1', format: (v) => String(Math.round(v)) }]}
                    />
                    <Chart
                      title="Frame rate (fps)"
                      height={140}
                      x={samples.map((s) => s.at)}
                      series={[{ label: 'fps', values: samples.map((s) => s.fps), color: '#12633a', format: (v) => String(Math.round(v)) }]}
                    />
                  </div>
                ) : null}
              </>
            ) : (
              <p class="muted">Nothing arrives from an encoder at the moment.</p>
            )}
          </section>
        </div>
        <div class="stack">
          <section class="card" aria-labelledby="ingest-title">
            <h2 id="ingest-title">Publish</h2>
            <p class="small muted">Point your encoder (OBS, ffmpeg, a hardware encoder) at the server with the key.</p>
            <CopyField label="Server" value={i.ingest_url} />
            {i.stream_key ? (
              <div class="copy">
                <CopyField label="Stream key" value={reveal ? i.stream_key : '•'.repeat(Math.min(24, i.stream_key.length))} />
                <button class="button button--small button--quiet" type="button" aria-pressed={reveal} onClick={() => setReveal(!reveal)}>
                  {reveal ? 'Hide the key' : 'Reveal the key'}
                </button>
              </div>
            ) : (
              <p class="muted small">The key is shown to those who may manage live streams.</p>
            )}
          </section>
          <section class="card" aria-labelledby="details-title">
            <h2 id="details-title">Details</h2>
            <dl class="details">
              <dt>Air date</dt>
              <dd>{i.air_date ? new Date(i.air_date * 1000).toLocaleString() : 'none'}</dd>
              <dt>Started</dt>
              <dd>{i.start_time ? new Date(i.start_time * 1000).toLocaleString() : '–'}</dd>
              <dt>Segments</dt>
              <dd>{i.segment_length} s</dd>
              <dt>DVR</dt>
              <dd>{i.dvr_enabled ? 'on' : 'off'}</dd>
              <dt>Recording</dt>
              <dd>{i.vod_created_at && i.video_id ? <RecordingLinks playerUuid={i.player_uuid} /> : 'after the broadcast'}</dd>
            </dl>
          </section>
        </div>
      </div>
    </section>
  );
}

/** Where the recording is: the broadcast's player (the recording is its chapter) and its watch page. */
function RecordingLinks({ playerUuid }: { playerUuid: string }) {
  const [playerId, setPlayerId] = useState<number | null>(null);
  useEffect(() => {
    void api.GET('/dashboard/v1/players/uuid={uuid}', { params: { path: { uuid: playerUuid } } }).then(({ data }) => setPlayerId(data?.id ?? null));
  }, [playerUuid]);
  return (
    <>
      {playerId ? (
        <>
          <Link href={`/players/${playerId}`}>Its player</Link> ·{' '}
        </>
      ) : null}
      <a href={`/watch/${playerUuid}`} target="_blank" rel="noopener">
        Watch the recording
      </a>
    </>
  );
}
