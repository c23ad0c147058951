import { useEffect, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import { FormError } from './field.tsx';

type Thumbnail = { id: number; url: string | null };
type Video = { id: number; name: string };

/**
 * The poster of each video of a player: one of the thumbnails taken from it (a button each, pressed
 * for the chosen one: a click or Enter chooses, moving between them does not), or an image by URL.
 * A choice is the video's (every player showing the video shows it), as the API has it.
 */
export function Thumbnails({ playerUuid, videos, writable, onChange }: { playerUuid: string; videos: Video[]; writable: boolean; onChange: () => void }) {
  return (
    <section class="card stack" aria-labelledby="thumbnails-title">
      <h2 id="thumbnails-title">Thumbnails</h2>
      {videos.length === 0 ? <p class="muted">The thumbnails of the chapters' videos appear here once they are processed.</p> : null}
      {videos.map((v) => (
        <VideoThumbnails key={v.id} playerUuid={playerUuid} video={v} writable={writable} onChange={onChange} />
      ))}
    </section>
  );
}

function VideoThumbnails({ playerUuid, video, writable, onChange }: { playerUuid: string; video: Video; writable: boolean; onChange: () => void }) {
  const [thumbnails, setThumbnails] = useState<Thumbnail[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [custom, setCustom] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  async function load() {
    const path = { video_id: video.id };
    const [all, chosen] = await Promise.all([
      api.GET('/dashboard/v1/videos/{video_id}/thumbnails', { params: { path } }),
      api.GET('/dashboard/v1/videos/{video_id}/selected_thumbnail', { params: { path } }),
    ]);
    const list = Array.isArray(all.data) ? all.data : (all.data?.thumbnails ?? []);
    setThumbnails(list.filter((t) => t.url));
    setSelected(chosen.data?.id ?? null);
  }
  useEffect(() => void load(), [video.id]);

  async function choose(item: { thumbnail_id: number } | { thumbnail_url: string; video_id: number }) {
    setProblem(null);
    const { error } = await api.PATCH('/dashboard/v1.1/players/{player_uuid}/selected_thumbnails', {
      params: { path: { player_uuid: playerUuid } },
      body: { thumbnails: [item] },
    });
    if (error) return setProblem(problemOf(error).message);
    setCustom('');
    await load();
    onChange();
  }

  return (
    <fieldset class="thumbs" disabled={!writable}>
      <legend>{video.name}</legend>
      <FormError message={problem} />
      {thumbnails.length === 0 ? <p class="muted small">No thumbnails taken from it.</p> : null}
      <div class="thumbs__choices">
        {thumbnails.map((t, i) => (
          <button
            type="button"
            class="thumbs__choice"
            key={t.id}
            aria-pressed={selected === t.id}
            aria-label={`Thumbnail ${i + 1} of ${video.name}`}
            onClick={() => selected !== t.id && void choose({ thumbnail_id: t.id })}
          >
            <img src={t.url!} alt="" width={128} height={72} loading="lazy" />
          </button>
        ))}
      </div>
      {writable ? (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void choose({ thumbnail_url: custom.trim(), video_id: video.id });
          }}
        >
          <label for={`custom-thumbnail-${video.id}`}>Or an image by URL</label>
          <input
            id={`custom-thumbnail-${video.id}`}
            type="url"
            placeholder="https://…"
            required
            value={custom}
            onInput={(e) => setCustom(e.currentTarget.value)}
          />
          <button class="button" type="submit">
            Use it
          </button>
        </form>
      ) : null}
    </fieldset>
  );
}
