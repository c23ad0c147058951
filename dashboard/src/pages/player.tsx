import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Captions } from '../components/captions.tsx';
import { CopyField } from '../components/copy.tsx';
import { Field, FormError } from '../components/field.tsx';
import { useReorder } from '../components/reorder.ts';
import { Thumbnails } from '../components/thumbnails.tsx';
import { duration, statusLabel } from '../format.ts';
import { mayWrite, session } from '../session.ts';
import type { Video } from './library.tsx';
import type { Player } from './players.tsx';

type Chapter = Player['chapters_attributes'][number];

/** Unix seconds ↔ the value of an `<input type="datetime-local">` (the browser's time zone). */
const toLocal = (s: number | null) => (s ? new Date(s * 1000 - new Date(s * 1000).getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : '');
const fromLocal = (v: string) => (v ? Math.floor(new Date(v).getTime() / 1000) : null);

interface Settings {
  name: string;
  description: string;
  release_date: string;
  expiry_date: string;
  access_code: string;
  whitelisted_embed_domains: string;
  default_hd: boolean;
  autoplay: boolean;
}

const settingsOf = (p: Player): Settings => ({
  name: p.name,
  description: p.description ?? '',
  release_date: toLocal(p.release_date),
  expiry_date: toLocal(p.expiry_date),
  access_code: p.access_code ?? '',
  whitelisted_embed_domains: p.whitelisted_embed_domains.join(', '),
  default_hd: p.default_hd,
  autoplay: p.autoplay,
});

/**
 * A player: its chapters (add from the library, reorder, remove), its settings, the share link and
 * embed codes, and a preview of the real embedded player.
 */
export function PlayerPage({ id }: { id: number }) {
  const [player, setPlayer] = useState<Player | null | undefined>(undefined);
  const [settings, setSettings] = useState<Settings | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [library, setLibrary] = useState<Video[]>([]);
  const [adding, setAdding] = useState('');
  const [previewKey, setPreviewKey] = useState(0);
  const [embeddable, setEmbeddable] = useState<boolean | null>(null);
  const writable = mayWrite(session.value);
  // A chapter dropped on another takes its place (moveTo, below: a drop comes once the chapters are drawn).
  const reorder = useReorder(writable, (chapterId, index) => moveTo(chapterId, index));

  const load = useCallback(async () => {
    const { data } = await api.GET('/dashboard/v1/players/{id}', { params: { path: { id } } });
    setPlayer(data ?? null);
    if (!data) return;
    setSettings(settingsOf(data));
    const embed = await api.GET('/dashboard/v1/players/uuid={uuid}/embed', { params: { path: { uuid: data.uuid } } });
    setEmbeddable(embed.data?.embed_enabled ?? null);
  }, [id]);
  useEffect(() => void load(), [load]);
  useEffect(() => {
    if (!writable) return;
    void api.GET('/dashboard/v1/videos', { params: { query: { per_page: 200 } } }).then(({ data }) => {
      if (data && 'videos' in data) setLibrary([...data.videos].reverse());
    });
  }, [writable]);

  if (player === undefined || (player && !settings)) return <section class="page" aria-busy="true" />;
  if (player === null) {
    return (
      <section class="page">
        <h1>No such player</h1>
        <Link href="/players">Back to the players</Link>
      </section>
    );
  }
  const s = settings!;
  const chapters = [...player.chapters_attributes].sort((a, b) => a.position - b.position);
  const watchUrl = `${location.origin}/watch/${player.uuid}`;
  const embedUrl = `${location.origin}/embed/${player.uuid}`;
  const fixed = `<iframe src="${embedUrl}" width="${player.width}" height="${player.height}" title="${player.name.replace(/"/g, '&quot;')}" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen style="border:0"></iframe>`;
  const responsive = `<div style="position:relative;padding-top:56.25%"><iframe src="${embedUrl}" title="${player.name.replace(/"/g, '&quot;')}" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen style="position:absolute;inset:0;width:100%;height:100%;border:0"></iframe></div>`;

  /** Writes chapters through the player's nested attributes: every change is the API's to accept or refuse. */
  async function writeChapters(attributes: Array<{ id: number; position?: number; _destroy?: boolean }>) {
    setProblem(null);
    const { data, error } = await api.PATCH('/dashboard/v1/players/{id}', { params: { path: { id } }, body: { chapters_attributes: attributes } });
    if (data) {
      setPlayer(data);
      setPreviewKey((k) => k + 1);
    } else setProblem(problemOf(error).message);
  }

  /** Puts a chapter at another place (by its buttons, or dropped on another chapter). */
  function moveTo(chapterId: number, to: number) {
    const order = chapters.map((c) => c.id);
    const from = order.indexOf(chapterId);
    if (from < 0 || to < 0 || to >= order.length || to === from) return;
    order.splice(to, 0, ...order.splice(from, 1));
    void writeChapters(order.map((cid, position) => ({ id: cid, position })));
  }
  const move = (chapter: Chapter, by: number) => moveTo(chapter.id, chapters.indexOf(chapter) + by);

  /** Embedding on or off: its own operation, counted against the embeds allotment. */
  async function setEmbedding(on: boolean) {
    setProblem(null);
    const path = { path: { uuid: player!.uuid } };
    const { data, error } = on
      ? await api.POST('/dashboard/v1/players/uuid={uuid}/embed', { params: path })
      : await api.DELETE('/dashboard/v1/players/uuid={uuid}/embed', { params: path });
    if (data) {
      setEmbeddable(data.embed_enabled);
      setPreviewKey((k) => k + 1);
    } else setProblem(problemOf(error).message);
  }

  async function addChapter(event: Event) {
    event.preventDefault();
    if (!adding) return;
    setProblem(null);
    const { error } = await api.POST('/dashboard/v1/chapters', { body: { player_id: id, video_id: Number(adding), position: chapters.length } });
    if (error) return setProblem(problemOf(error).message);
    setAdding('');
    await load();
    setPreviewKey((k) => k + 1);
  }

  async function save(event: Event) {
    event.preventDefault();
    setFields({});
    setProblem(null);
    setSaved(false);
    const body = {
      name: s.name,
      description: s.description || null,
      release_date: fromLocal(s.release_date) ?? undefined,
      expiry_date: fromLocal(s.expiry_date),
      access_code: s.access_code || null,
      whitelisted_embed_domains: s.whitelisted_embed_domains
        .split(/[\s,]+/)
        .map((d) => d.trim())
        .filter(Boolean),
      default_hd: s.default_hd,
      autoplay: s.autoplay,
    };
    const { data, error } = await api.PATCH('/dashboard/v1/players/{id}', { params: { path: { id } }, body });
    if (data) {
      setPlayer(data);
      setSettings(settingsOf(data));
      setSaved(true);
      setPreviewKey((k) => k + 1);
      return;
    }
    const p = problemOf(error);
    setFields(p.fields);
    setProblem(p.message);
  }

  const set = <K extends keyof Settings>(key: K, value: Settings[K]) => setSettings({ ...s, [key]: value });

  return (
    <section class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/players">Players</Link> / <span aria-current="page">{player.name}</span>
      </nav>
      <header class="page__header">
        <h1>{player.name}</h1>
        <span class="actions">
          <Link class="button" href={`/players/${id}/analytics`}>
            Analytics
          </Link>
          <a class="button" href={watchUrl} target="_blank" rel="noopener">
            Open watch page
          </a>
        </span>
      </header>
      <FormError message={problem} />

      <div class="columns">
        <div class="stack">
          <section class="card" aria-labelledby="preview-title">
            <h2 id="preview-title">Preview</h2>
            <div class="preview">
              <iframe key={previewKey} src={embedUrl} title={`Preview of ${player.name}`} allow="autoplay; fullscreen; picture-in-picture" allowFullScreen />
            </div>
          </section>

          <section class="card" aria-labelledby="chapters-title">
            <h2 id="chapters-title">Chapters</h2>
            {chapters.length === 0 ? <p class="muted">No chapters yet: add a video from the library.</p> : null}
            <ol class="chapters">
              {chapters.map((c, i) => {
                const status = statusLabel(c.video_attributes.status);
                return (
                  <li class={`chapter${reorder.dragged === c.id ? ' chapter--dragged' : ''}`} key={c.id} data-chapter-id={c.id} {...reorder.target(c.id, i)}>
                    <span class={`chapter__index${writable ? ' chapter__grip' : ''}`} {...reorder.handle(c.id)}>
                      {i + 1}
                    </span>
                    <span class="chapter__name">{c.video_attributes.name}</span>
                    <span class={`badge badge--${status.tone}`}>{status.text}</span>
                    <span class="muted">{duration(c.video_attributes.seconds)}</span>
                    <Link href={`/players/${id}/chapters/${c.id}`}>
                      CTAs<span class="visually-hidden"> of {c.video_attributes.name}</span>
                    </Link>
                    {writable ? (
                      <span class="chapter__actions">
                        <button
                          class="button button--small"
                          type="button"
                          disabled={i === 0}
                          onClick={() => move(c, -1)}
                          aria-label={`Move ${c.video_attributes.name} up`}
                        >
                          ↑
                        </button>
                        <button
                          class="button button--small"
                          type="button"
                          disabled={i === chapters.length - 1}
                          onClick={() => move(c, 1)}
                          aria-label={`Move ${c.video_attributes.name} down`}
                        >
                          ↓
                        </button>
                        <button
                          class="button button--small button--quiet"
                          type="button"
                          onClick={() => void writeChapters([{ id: c.id, _destroy: true }])}
                          aria-label={`Remove ${c.video_attributes.name}`}
                        >
                          Remove
                        </button>
                      </span>
                    ) : null}
                  </li>
                );
              })}
            </ol>
            {writable ? (
              <form class="inline-form" onSubmit={(e) => void addChapter(e)}>
                <label for="add-chapter">Add a video</label>
                <select id="add-chapter" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
                  <option value="">Choose from the library…</option>
                  {library.map((v) => (
                    <option key={v.id} value={String(v.id)}>
                      {v.name}
                    </option>
                  ))}
                </select>
                <button class="button button--primary" type="submit" disabled={!adding}>
                  Add chapter
                </button>
              </form>
            ) : null}
          </section>

          <Captions chapters={chapters} writable={writable} />

          <Thumbnails
            playerUuid={player.uuid}
            videos={[
              ...new Map(
                chapters.filter((c) => c.video_attributes.status === 'ready').map((c) => [c.video_id, { id: c.video_id, name: c.video_attributes.name }]),
              ).values(),
            ]}
            writable={writable}
            onChange={() => setPreviewKey((k) => k + 1)}
          />

          <section class="card" aria-labelledby="share-title">
            <h2 id="share-title">Share and embed</h2>
            <CopyField label="Share link" value={watchUrl} />
            <label class="check">
              <input
                type="checkbox"
                checked={embeddable === true}
                disabled={!writable || embeddable === null}
                onChange={(e) => void setEmbedding(e.currentTarget.checked)}
              />{' '}
              Other sites may embed this player
            </label>
            {embeddable === false ? <p class="muted small">Embedding is off: the embed page and the codes below answer nothing until it is on again.</p> : null}
            <CopyField label="Embed code (fixed size)" value={fixed} multiline />
            <CopyField label="Embed code (responsive)" value={responsive} multiline />
          </section>
        </div>

        <form class="card stack" onSubmit={(e) => void save(e)} aria-labelledby="settings-title">
          <h2 id="settings-title">Settings</h2>
          <fieldset class="plain" disabled={!writable}>
            <Field label="Name" required value={s.name} error={fields.name} onInput={(e) => set('name', e.currentTarget.value)} />
            <Field label="Description" value={s.description} error={fields.description} onInput={(e) => set('description', e.currentTarget.value)} />
            <Field
              label="Release date"
              type="datetime-local"
              value={s.release_date}
              error={fields.release_date}
              onInput={(e) => set('release_date', e.currentTarget.value)}
            />
            <Field
              label="Expiry date"
              type="datetime-local"
              value={s.expiry_date}
              error={fields.expiry_date}
              hint="Empty: never expires."
              onInput={(e) => set('expiry_date', e.currentTarget.value)}
            />
            <Field
              label="Access code"
              value={s.access_code}
              error={fields.access_code}
              hint="Viewers must enter it. Empty: none."
              onInput={(e) => set('access_code', e.currentTarget.value)}
            />
            <Field
              label="Allowed embedding domains"
              value={s.whitelisted_embed_domains}
              error={fields.whitelisted_embed_domains ?? fields['whitelisted_embed_domains/0']}
              hint="Comma-separated. Empty: any site may embed it."
              onInput={(e) => set('whitelisted_embed_domains', e.currentTarget.value)}
            />
            <label class="check">
              <input type="checkbox" checked={s.default_hd} onChange={(e) => set('default_hd', e.currentTarget.checked)} /> Start in HD
            </label>
            <label class="check">
              <input type="checkbox" checked={s.autoplay} onChange={(e) => set('autoplay', e.currentTarget.checked)} /> Autoplay
            </label>
            {writable ? (
              <div class="form-actions">
                <button class="button button--primary" type="submit">
                  Save settings
                </button>
                {saved ? (
                  <span role="status" class="muted">
                    Saved
                  </span>
                ) : null}
              </div>
            ) : null}
          </fieldset>
        </form>
      </div>
    </section>
  );
}
