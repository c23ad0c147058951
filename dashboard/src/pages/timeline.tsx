import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { changeOf, CtaEditor, draftOf, NEW_CTA_HTML, rebase, type Cta, type CtaDraft } from '../components/cta-editor.tsx';
import { FormError } from '../components/field.tsx';
import { duration as clock } from '../format.ts';
import { lanesOf, shownSeconds } from '../lanes.ts';
import type { paths } from '../openapi.d.ts';
import { mayWrite, session } from '../session.ts';
import type { Player } from './players.tsx';

type Gate = Extract<paths['/dashboard/v1/events']['get']['responses'][200]['content']['application/json'], { events: unknown }>['events'][number];

/**
 * A chapter's CTAs on a timeline under the preview player: add one, drag it to move it, drag its
 * right edge to change how long it shows (or use the arrow keys: ←/→ move by a second, Shift+←/→
 * change the duration), and edit its HTML, width and post-roll with a live preview. Every change is
 * sent to the API, whose refusals are shown next to their field.
 */
export function Timeline({ playerId, chapterId }: { playerId: number; chapterId: number }) {
  const [player, setPlayer] = useState<Player | null>(null);
  const [ctas, setCtas] = useState<Cta[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [draft, setDraft] = useState<CtaDraft | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [previewKey, setPreviewKey] = useState(0);
  const [gates, setGates] = useState<Gate[]>([]);
  const [gateOptions, setGateOptions] = useState({ is_closeable: true, is_new_contact: true });
  const track = useRef<HTMLDivElement>(null);
  // What the editor last showed, for a save's answer to be merged into what was typed meanwhile.
  const shown = useRef({ selected, draft });
  shown.current = { selected, draft };
  const writable = mayWrite(session.value);

  const load = useCallback(async () => {
    const [p, c] = await Promise.all([
      api.GET('/dashboard/v1/players/{id}', { params: { path: { id: playerId } } }),
      api.GET('/dashboard/v1/chapters/{id}/ctas', { params: { path: { id: chapterId }, query: { per_page: 200 } } }),
    ]);
    setPlayer(p.data ?? null);
    if (c.data) setCtas(Array.isArray(c.data) ? c.data : c.data.ctas);
    else setProblem(problemOf(c.error).message);
    // The organization's email gates, of which this chapter's (the list has no chapter filter).
    const g = await api.GET('/dashboard/v1/events', { params: { query: { event_type: ['simple_email'], per_page: 200 } } });
    if (g.data && 'events' in g.data) setGates(g.data.events.filter((e) => e.chapter_id === chapterId));
  }, [playerId, chapterId]);
  useEffect(() => void load(), [load]);

  const chapter = player?.chapters_attributes.find((c) => c.id === chapterId);
  // A chapter's email gates are in its CTA list too: they have their own marks and section.
  const isGate = (c: Cta) => gates.some((g) => g.id === c.id);
  const timed = ctas.filter((c) => c.second >= 0 && !isGate(c));
  const lanes = lanesOf(timed);
  const laneCount = Math.max(1, ...[...lanes.values()].map((l) => l + 1));
  // The video's length when known (else 30 s), stretched to show a CTA placed past it.
  const length = Math.max(chapter?.video_attributes.seconds || 30, ...timed.map((c) => c.second + shownSeconds(c)));

  function select(cta: Cta | null) {
    setSelected(cta?.id ?? null);
    setDraft(cta ? draftOf(cta) : null);
    setFields({});
  }

  /** Sends a change of one CTA; on a refusal, shows it and puts the CTA back as the API has it. */
  async function update(id: number, body: { second?: number; duration?: number | null; width?: number; html?: string; auto_close?: boolean }) {
    setProblem(null);
    setFields({});
    const base = shown.current.draft;
    const { data, error } = await api.PATCH('/dashboard/v1/ctas/{id}', { params: { path: { id } }, body });
    if (data) {
      setCtas((all) => all.map((c) => (c.id === id ? data : c)));
      if (shown.current.selected === id) setDraft((mine) => (base && mine ? rebase(base, mine, draftOf(data)) : draftOf(data)));
      setPreviewKey((k) => k + 1);
      return true;
    }
    const p = problemOf(error);
    setFields(p.fields);
    setProblem(p.message);
    await load();
    return false;
  }

  async function add() {
    const second = Math.min(Math.floor(length / 4), Math.max(0, length - 6));
    const { data, error } = await api.POST('/dashboard/v1/ctas', {
      body: { chapter_id: chapterId, second, duration: 5, auto_close: true, width: 300, html: NEW_CTA_HTML },
    });
    if (!data) return setProblem(problemOf(error).message);
    setCtas((all) => [...all, data]);
    select(data);
    setPreviewKey((k) => k + 1);
  }

  async function addGate() {
    setProblem(null);
    const { error } = await api.POST('/dashboard/v1/ctas/default_email_gate', { body: { chapter_id: chapterId, ...gateOptions } });
    if (error) return setProblem(problemOf(error).message);
    await load();
    setPreviewKey((k) => k + 1);
  }

  async function removeGate(id: number) {
    const { error } = await api.DELETE('/dashboard/v1/events/{id}', { params: { path: { id } } });
    if (error) setProblem(problemOf(error).message);
    await load();
    setPreviewKey((k) => k + 1);
  }

  async function remove(id: number) {
    const { error } = await api.DELETE('/dashboard/v1/ctas/{id}', { params: { path: { id } } });
    if (error) return setProblem(problemOf(error).message);
    setCtas((all) => all.filter((c) => c.id !== id));
    select(null);
    setPreviewKey((k) => k + 1);
  }

  /** Dragging a block (move) or its right edge (resize): seconds follow the pointer, the API gets the result. */
  function drag(cta: Cta, mode: 'move' | 'resize', start: PointerEvent) {
    if (!writable || !track.current) return;
    start.preventDefault();
    select(cta);
    const perPixel = length / track.current.getBoundingClientRect().width;
    const origin = { x: start.clientX, second: cta.second, duration: cta.duration ?? 5 };
    let next = { second: origin.second, duration: origin.duration };
    const onMove = (e: PointerEvent) => {
      const delta = Math.round((e.clientX - origin.x) * perPixel);
      next =
        mode === 'move'
          ? { second: Math.min(Math.max(0, origin.second + delta), Math.max(0, length - 1)), duration: origin.duration }
          : { second: origin.second, duration: Math.max(1, origin.duration + delta) };
      setCtas((all) => all.map((c) => (c.id === cta.id ? { ...c, ...next } : c)));
    };
    const onUp = () => {
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
      if (next.second !== origin.second || next.duration !== origin.duration) void update(cta.id, { ...next, auto_close: true });
    };
    window.addEventListener('pointermove', onMove);
    window.addEventListener('pointerup', onUp);
  }

  function keys(cta: Cta, e: KeyboardEvent) {
    if (!writable) return;
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    if (e.shiftKey) void update(cta.id, { duration: Math.max(1, (cta.duration ?? 5) + step), auto_close: true });
    else void update(cta.id, { second: Math.max(0, cta.second + step) });
  }

  if (!player) return <section class="page" aria-busy="true" />;
  if (!chapter) {
    return (
      <section class="page">
        <h1>No such chapter</h1>
        <Link href={`/players/${playerId}`}>Back to the player</Link>
      </section>
    );
  }
  const ticks = Array.from({ length: 6 }, (_, i) => Math.round((length * i) / 5));
  return (
    <section class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/players">Players</Link> / <Link href={`/players/${playerId}`}>{player.name}</Link> /{' '}
        <span aria-current="page">{chapter.video_attributes.name}</span>
      </nav>
      <header class="page__header">
        <h1>Call-to-actions: {chapter.video_attributes.name}</h1>
        {writable ? (
          <button class="button button--primary" type="button" onClick={() => void add()}>
            Add a CTA
          </button>
        ) : null}
      </header>
      <FormError message={problem} />
      <div class="preview preview--wide">
        <iframe
          key={previewKey}
          src={`/embed/${player.uuid}`}
          title={`Preview of ${player.name}`}
          allow="autoplay; fullscreen; picture-in-picture"
          allowFullScreen
        />
      </div>

      <section class="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline ({clock(length)})</h2>
        <p class="muted small">Drag a CTA to move it, its right edge to change how long it shows; or focus it and use ← → (Shift: duration).</p>
        <div class="timeline" ref={track} style={{ height: `calc(${laneCount} * var(--lane) + 0.6rem)` }}>
          {gates
            .filter((g) => g.second >= 0)
            .map((g) => (
              <span
                key={g.id}
                class="timeline__gate"
                style={{ left: `${(g.second / length) * 100}%` }}
                title={`Email gate at ${clock(g.second)}`}
                aria-hidden="true"
              />
            ))}
          {timed.map((c) => (
            <button
              key={c.id}
              type="button"
              class={`timeline__cta${selected === c.id ? ' timeline__cta--selected' : ''}`}
              style={{
                left: `${(c.second / length) * 100}%`,
                width: `${(shownSeconds(c) / length) * 100}%`,
                top: `calc(${lanes.get(c.id) ?? 0} * var(--lane) + 0.45rem)`,
              }}
              aria-label={`CTA at ${clock(c.second)} for ${c.duration ?? 'until closed'} seconds`}
              aria-pressed={selected === c.id}
              data-cta-id={c.id}
              onPointerDown={(e) => drag(c, 'move', e)}
              onClick={() => select(c)}
              onKeyDown={(e) => keys(c, e)}
            >
              <span class="timeline__label">{clock(c.second)}</span>
              {writable ? <span class="timeline__handle" aria-hidden="true" onPointerDown={(e) => (e.stopPropagation(), drag(c, 'resize', e))} /> : null}
            </button>
          ))}
        </div>
        <div class="timeline__ticks" aria-hidden="true">
          {ticks.map((t) => (
            <span key={t}>{clock(t)}</span>
          ))}
        </div>
        {ctas.some((c) => c.second === -1 && !isGate(c)) ? (
          <p class="small">
            After the video:{' '}
            {ctas
              .filter((c) => c.second === -1 && !isGate(c))
              .map((c) => (
                <button key={c.id} class="button button--small" type="button" onClick={() => select(c)}>
                  Post-roll CTA {c.id}
                </button>
              ))}
          </p>
        ) : null}
      </section>

      <section class="card stack" aria-labelledby="gate-title">
        <h2 id="gate-title">Email gate</h2>
        <p class="muted small">Asks viewers for their address before they watch on; the addresses appear in the analytics as identified viewers.</p>
        {gates.length === 0 ? <p class="muted">No email gate on this chapter.</p> : null}
        <ul class="captions">
          {gates.map((g) => (
            <li class="caption" key={g.id}>
              <span>
                Email gate at {g.second === -1 ? 'the end' : clock(g.second)} {g.closeable ? '(viewers may skip it)' : '(required)'}
              </span>
              {writable ? (
                <button
                  class="button button--small button--quiet"
                  type="button"
                  onClick={() => void removeGate(g.id)}
                  aria-label={`Delete the email gate at ${clock(g.second)}`}
                >
                  Delete
                </button>
              ) : null}
            </li>
          ))}
        </ul>
        {writable ? (
          <div class="inline-form">
            <label class="check">
              <input
                type="checkbox"
                checked={gateOptions.is_closeable}
                onChange={(e) => setGateOptions({ ...gateOptions, is_closeable: e.currentTarget.checked })}
              />{' '}
              Viewers may skip it
            </label>
            <label class="check">
              <input
                type="checkbox"
                checked={gateOptions.is_new_contact}
                onChange={(e) => setGateOptions({ ...gateOptions, is_new_contact: e.currentTarget.checked })}
              />{' '}
              Only for new contacts
            </label>
            <button class="button" type="button" onClick={() => void addGate()}>
              Add an email gate
            </button>
          </div>
        ) : null}
      </section>

      {draft && selected !== null ? (
        <CtaEditor
          title={`CTA ${selected}`}
          draft={draft}
          fields={fields}
          writable={writable}
          onChange={setDraft}
          onSave={() => void update(selected, changeOf(draft))}
          onDelete={() => void remove(selected)}
        />
      ) : null}
    </section>
  );
}
