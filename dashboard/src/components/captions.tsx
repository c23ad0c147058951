import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import type { paths } from '../openapi.d.ts';
import { FormError } from './field.tsx';

type Caption = Extract<paths['/dashboard/v1/videos/{video_id}/captions']['get']['responses'][200]['content']['application/json'], unknown[]>[number];
type Chapter = { id: number; video_id: number; video_attributes: { name: string } };

/**
 * The captions of a player's videos: upload an SRT or WebVTT file for a chapter's video, publish it
 * or set it back to draft (viewers see published captions only), delete it.
 */
export function Captions({ chapters, writable }: { chapters: Chapter[]; writable: boolean }) {
  const [captions, setCaptions] = useState<Record<number, Caption[]>>({});
  const [videoId, setVideoId] = useState(chapters[0]?.video_id ?? 0);
  const [language, setLanguage] = useState('en');
  const [file, setFile] = useState<File | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const videoIds = chapters.map((c) => c.video_id).join(',');

  const load = useCallback(async () => {
    const entries = await Promise.all(
      chapters.map(async (c) => {
        const { data } = await api.GET('/dashboard/v1/videos/{video_id}/captions', { params: { path: { video_id: c.video_id } } });
        return [c.video_id, data ? (Array.isArray(data) ? data : data.captions) : []] as const;
      }),
    );
    setCaptions(Object.fromEntries(entries));
  }, [videoIds]);
  useEffect(() => void load(), [load]);

  async function upload(event: Event) {
    event.preventDefault();
    if (!file) return;
    setFields({});
    setProblem(null);
    const content = await file.text();
    const format = /\.vtt$/i.test(file.name) || content.startsWith('WEBVTT') ? 'vtt' : 'srt';
    const { error } = await api.POST('/dashboard/v1/videos/{video_id}/captions', {
      params: { path: { video_id: videoId } },
      body: { language, format, content },
    });
    if (error) {
      const p = problemOf(error);
      setFields(p.fields);
      return setProblem(p.message);
    }
    setFile(null);
    await load();
  }

  async function act(result: Promise<{ error?: unknown }>) {
    setProblem(null);
    const { error } = await result;
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  const nameOf = (vid: number) => chapters.find((c) => c.video_id === vid)?.video_attributes.name ?? `Video ${vid}`;
  const all = chapters.flatMap((c) => (captions[c.video_id] ?? []).map((cap) => ({ cap, video: c.video_id })));
  return (
    <section class="card stack" aria-labelledby="captions-title">
      <h2 id="captions-title">Captions</h2>
      <FormError message={problem} />
      {all.length === 0 ? <p class="muted">No captions yet.</p> : null}
      <ul class="captions">
        {all.map(({ cap, video }) => (
          <li key={cap.id} class="caption">
            <span>
              <strong>{cap.formatted_language_name}</strong> <span class="muted small">on {nameOf(video)}</span>
            </span>
            <span class={`badge badge--${cap.status === 'published' ? 'ok' : cap.status === 'error' ? 'bad' : 'idle'}`}>{cap.status}</span>
            {writable ? (
              <span class="actions">
                {cap.status === 'published' ? (
                  <button
                    class="button button--small"
                    type="button"
                    onClick={() => void act(api.PATCH('/dashboard/v1/captions/{id}/draft', { params: { path: { id: cap.id } } }))}
                  >
                    Set to draft
                  </button>
                ) : (
                  <button
                    class="button button--small"
                    type="button"
                    aria-label={`Publish ${cap.formatted_language_name} captions of ${nameOf(video)}`}
                    onClick={() => void act(api.PATCH('/dashboard/v1/captions/{id}/publish', { params: { path: { id: cap.id } } }))}
                  >
                    Publish
                  </button>
                )}
                <button
                  class="button button--small button--quiet"
                  type="button"
                  aria-label={`Delete ${cap.formatted_language_name} captions of ${nameOf(video)}`}
                  onClick={() => void act(api.DELETE('/dashboard/v1/captions/{id}', { params: { path: { id: cap.id } } }))}
                >
                  Delete
                </button>
              </span>
            ) : null}
          </li>
        ))}
      </ul>
      {writable && chapters.length > 0 ? (
        <form class="inline-form" onSubmit={(e) => void upload(e)}>
          <label for="caption-video">Video</label>
          <select id="caption-video" value={String(videoId)} onChange={(e) => setVideoId(Number(e.currentTarget.value))}>
            {chapters.map((c) => (
              <option key={c.id} value={String(c.video_id)}>
                {c.video_attributes.name}
              </option>
            ))}
          </select>
          <label for="caption-language">Language</label>
          <input
            id="caption-language"
            size={6}
            required
            value={language}
            aria-invalid={fields.language ? true : undefined}
            onInput={(e) => setLanguage(e.currentTarget.value)}
          />
          <label for="caption-file">File</label>
          <input id="caption-file" type="file" accept=".srt,.vtt,text/vtt" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          <button class="button button--primary" type="submit" disabled={!file}>
            Upload captions
          </button>
          {fields.language || fields.content ? <p class="field__error">{fields.language ?? fields.content}</p> : null}
        </form>
      ) : null}
    </section>
  );
}
