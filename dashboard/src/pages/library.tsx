import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, problemOf } from '../api.ts';
import { VideoPoster } from '../components/poster.tsx';
import { ListHeader } from '../components/list-header.tsx';
import { Pager } from '../components/pager.tsx';
import type { paths } from '../openapi.d.ts';
import { bytes, date, duration, statusLabel } from '../format.ts';
import { newestFirst, type Listed } from '../paging.ts';
import { mayWrite, session } from '../session.ts';
import { pauseUpload, resumeUpload, startUpload, unfinished, uploads } from '../uploads.ts';

export type Video = Extract<paths['/dashboard/v1/videos']['get']['responses'][200]['content']['application/json'], { videos: unknown }>['videos'][number];

const PER_PAGE = 50;
const POLL_MS = 3000;

type Status = NonNullable<NonNullable<paths['/dashboard/v1/videos']['get']['parameters']['query']>['status']>;
const STATUSES: Array<[Status | '', string]> = [
  ['', 'Any status'],
  ['ready', 'Ready'],
  ['processing', 'Processing'],
  ['waiting_for_upload', 'Waiting for upload'],
  ['error', 'Failed'],
];

/** The organization's videos, newest first (of one status, when one is chosen). */
function newestVideos(query: string, status: Status | '', page: number): Promise<Listed<Video>> {
  const q = query.trim() || undefined;
  return newestFirst(PER_PAGE, page, async (per_page, p) => {
    const { data, error } = await api.GET('/dashboard/v1/videos', { params: { query: { per_page, page: p, query: q, status: status || undefined } } });
    return data && 'videos' in data ? { items: data.videos, count: data.summary.count } : { error: problemOf(error).message };
  });
}

export function Library() {
  const [query, setQuery] = useState('');
  const [status, setStatus] = useState<Status | ''>('');
  const [page, setPage] = useState(1);
  const [videos, setVideos] = useState<Video[] | null>(null);
  const [count, setCount] = useState(0);
  const [problem, setProblem] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const writable = mayWrite(session.value);
  const earlier = unfinished().filter((u) => !uploads.value.some((x) => x.name === u.name && x.size === u.size));

  const load = useCallback(async () => {
    const result = await newestVideos(query, status, page);
    if ('error' in result) return setProblem(result.error);
    setProblem(null);
    setVideos(result.items);
    setCount(result.count);
  }, [query, status, page]);

  useEffect(() => {
    void load();
  }, [load]);

  // Statuses move by themselves while videos are processed.
  const busy = !!videos?.some((v) => v.status !== 'ready' && v.status !== 'error');
  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [busy, load]);

  function addFiles(files: FileList | null) {
    for (const file of Array.from(files ?? [])) void startUpload(file, () => void load()).then(() => load());
  }

  async function remove(video: Video) {
    if (!confirm(`Delete “${video.name}”? Its player and media go too.`)) return;
    const { error } = await api.DELETE('/dashboard/v1/videos/{id}', { params: { path: { id: video.id } } });
    if (error) setProblem(problemOf(error).message);
    await load();
  }

  const pages = Math.max(1, Math.ceil(count / PER_PAGE));
  return (
    <section class="page">
      <ListHeader
        title="Library"
        what="videos"
        query={query}
        onSearch={(q) => {
          setQuery(q);
          setPage(1);
        }}
      />

      <p class="filters">
        <label for="status-filter">Status</label>{' '}
        <select
          id="status-filter"
          value={status}
          onChange={(e) => {
            setStatus(e.currentTarget.value as Status | '');
            setPage(1);
          }}
        >
          {STATUSES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </p>

      {writable ? (
        <div
          class={`dropzone${dragging ? ' dropzone--over' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            addFiles(e.dataTransfer?.files ?? null);
          }}
        >
          <p>Drop video files here, or</p>
          <button class="button button--primary" type="button" onClick={() => fileInput.current?.click()}>
            Choose files
          </button>
          <input
            ref={fileInput}
            class="visually-hidden"
            type="file"
            accept="video/*,audio/*"
            multiple
            aria-label="Video files to upload"
            onChange={(e) => addFiles(e.currentTarget.files)}
          />
        </div>
      ) : null}

      {earlier.length > 0 ? (
        <p class="notice" role="status">
          Unfinished from before: {earlier.map((u) => `${u.name} (${bytes(u.size)})`).join(', ')}. Drop the same file again to continue where it stopped.
        </p>
      ) : null}

      {uploads.value.length > 0 ? (
        <ul class="uploads" aria-label="Uploads">
          {uploads.value.map((u) => (
            <li class="upload" key={u.key}>
              <span class="upload__name">{u.name}</span>
              <progress max={u.size} value={u.sent} aria-label={`${u.name} uploaded`} />
              <span class="upload__figure">
                {u.status === 'error'
                  ? u.error
                  : u.status === 'done'
                    ? 'Uploaded'
                    : `${Math.floor((u.sent / Math.max(1, u.size)) * 100)} % of ${bytes(u.size)}`}
              </span>
              {u.status === 'uploading' ? (
                <button class="button" type="button" onClick={() => pauseUpload(u.key)}>
                  Pause
                </button>
              ) : u.status === 'paused' ? (
                <button class="button" type="button" onClick={() => resumeUpload(u.key)}>
                  Resume
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}

      {problem ? (
        <p class="form-error" role="alert">
          {problem}
        </p>
      ) : null}

      {videos === null ? (
        <p aria-busy="true">Loading…</p>
      ) : videos.length === 0 ? (
        <p class="empty">{query || status ? 'No video matches.' : writable ? 'No videos yet. Upload one to begin.' : 'No videos yet.'}</p>
      ) : (
        <table class="table">
          <caption class="visually-hidden">Videos, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Added</th>
              {writable ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {videos.map((v) => {
              const status = statusLabel(v.status);
              return (
                <tr key={v.id} data-video-id={v.id}>
                  <td class="named">
                    <VideoPoster id={v.id} ready={v.status === 'ready'} />
                    <span>{v.name}</span>
                  </td>
                  <td>
                    <span class={`badge badge--${status.tone}`} title={v.error_message ?? undefined}>
                      {status.text}
                    </span>
                    {v.status === 'error' && v.error_message ? <span class="muted small"> {v.error_message}</span> : null}
                  </td>
                  <td>{duration(v.seconds)}</td>
                  <td>{date(v.created_at)}</td>
                  {writable ? (
                    <td class="table__actions">
                      <button class="button button--quiet" type="button" onClick={() => void remove(v)} aria-label={`Delete ${v.name}`}>
                        Delete
                      </button>
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}

      <Pager page={page} pages={pages} onPage={setPage} />
    </section>
  );
}
