import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';

/** A row's poster: asked for once the row scrolls into view (a long list costs only what is seen). */
function Poster({ find }: { find: () => Promise<string | null> }) {
  const box = useRef<HTMLSpanElement>(null);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let live = true;
    const seen = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      seen.disconnect();
      void find().then((found) => live && setUrl(found));
    });
    seen.observe(el);
    return () => {
      live = false;
      seen.disconnect();
    };
  }, [find]);
  return (
    <span class="poster" ref={box}>
      {/* Beside the item's name, which says what it shows. */}
      {url ? <img src={url} alt="" loading="lazy" width={96} height={54} /> : null}
    </span>
  );
}

/** The poster of a video: its selected thumbnail, once it has one. */
export function VideoPoster({ id, ready }: { id: number; ready: boolean }) {
  const find = useRef(async () => {
    const { data } = await api.GET('/dashboard/v1/videos/{video_id}/selected_thumbnail', { params: { path: { video_id: id } } });
    return data?.url ?? null;
  }).current;
  return ready ? <Poster find={find} /> : <span class="poster" />;
}

/** The poster of a player: the selected thumbnail of its first chapter's video. */
export function PlayerPoster({ id }: { id: number }) {
  const find = useRef(async () => {
    const { data } = await api.GET('/dashboard/v1/players/{player_id}/selected_thumbnails', { params: { path: { player_id: id } } });
    return (Array.isArray(data) ? data[0]?.thumbnail.url : null) ?? null;
  }).current;
  return <Poster find={find} />;
}
