import { signal } from '@preact/signals';
import { Upload as TusUpload } from 'tus-js-client';
import { api, problemOf } from './api.ts';

/**
 * Uploads in progress, through tus (resumable). Each file's upload capability is remembered in
 * localStorage by the file's name, size and date, so that after a reload the same file, dropped
 * again, continues where it stopped instead of starting over (the browser cannot reopen a file by
 * itself). tus-js-client remembers the offset side of it.
 */
export interface UploadState {
  key: string;
  name: string;
  size: number;
  sent: number;
  status: 'uploading' | 'paused' | 'done' | 'error';
  error?: string;
  videoId?: number;
  tus?: TusUpload;
}

interface Remembered {
  endpoint: string;
  videoId: number;
  name: string;
  size: number;
  savedAt: number;
}

const STORE = 'reelbase.uploads';
const keyOf = (file: File) => `${file.name}:${file.size}:${file.lastModified}`;

function remembered(): Record<string, Remembered> {
  try {
    return JSON.parse(localStorage.getItem(STORE) ?? '{}') as Record<string, Remembered>;
  } catch {
    return {};
  }
}

function remember(key: string, value: Remembered | null) {
  const all = remembered();
  if (value) all[key] = value;
  else delete all[key];
  localStorage.setItem(STORE, JSON.stringify(all));
}

/** Unfinished uploads of an earlier visit: drop the same file again to continue. */
export function unfinished(): Remembered[] {
  const day = 24 * 3600_000;
  return Object.values(remembered()).filter((u) => Date.now() - u.savedAt < day);
}

export const uploads = signal<UploadState[]>([]);

function update(key: string, change: Partial<UploadState>) {
  uploads.value = uploads.value.map((u) => (u.key === key ? { ...u, ...change } : u));
}

/** Starts (or continues) the upload of a file as a new video; `onDone` when its last byte is in. */
export async function startUpload(file: File, onDone: () => void): Promise<void> {
  const key = keyOf(file);
  if (uploads.value.some((u) => u.key === key && u.status !== 'error')) return;
  uploads.value = [...uploads.value.filter((u) => u.key !== key), { key, name: file.name, size: file.size, sent: 0, status: 'uploading' }];
  let target = remembered()[key];
  if (!target) {
    const name = file.name.replace(/\.[^.]+$/, '') || file.name;
    const { data, error } = await api.POST('/dashboard/v1/uploads', { body: { name } });
    if (!data) return update(key, { status: 'error', error: problemOf(error).message });
    target = { endpoint: data.url, videoId: data.video_id, name: file.name, size: file.size, savedAt: Date.now() };
    remember(key, target);
  }
  const tus = new TusUpload(file, {
    endpoint: target.endpoint,
    chunkSize: 8 * 1024 * 1024,
    retryDelays: [0, 1000, 3000, 5000, 10000],
    metadata: { filename: file.name, filetype: file.type },
    removeFingerprintOnSuccess: true,
    onProgress: (sent) => update(key, { sent }),
    onError: (err) => update(key, { status: 'error', error: err.message.split('\n')[0] }),
    onSuccess: () => {
      remember(key, null);
      update(key, { status: 'done', sent: file.size });
      onDone();
    },
  });
  update(key, { tus, videoId: target.videoId });
  const previous = await tus.findPreviousUploads();
  if (previous.length > 0) tus.resumeFromPreviousUpload(previous[0]);
  tus.start();
}

export function pauseUpload(key: string) {
  const u = uploads.value.find((x) => x.key === key);
  if (!u?.tus) return;
  void u.tus.abort();
  update(key, { status: 'paused' });
}

export function resumeUpload(key: string) {
  const u = uploads.value.find((x) => x.key === key);
  if (!u?.tus) return;
  u.tus.start();
  update(key, { status: 'uploading' });
}
