import fs from 'node:fs';
import path from 'node:path';
import * as tus from 'tus-js-client';
import type { Services } from './container.ts';

/** tus-js-client's Node build has a file-backed URL storage that its type declarations do not name. */
const FileUrlStorage = (tus as unknown as { FileUrlStorage: new (file: string) => tus.UrlStorage }).FileUrlStorage;

/** One line of a progress bar, redrawn in place on a terminal (one line per 10 % elsewhere). */
function progressBar(total: number, stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  let lastTenth = -1;
  return (sent: number, from = 0) => {
    const share = total === 0 ? 1 : sent / total;
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = (sent - from) / seconds / 1e6;
    const width = 30;
    const filled = Math.round(share * width);
    const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${(sent / 1e6).toFixed(1)}/${(total / 1e6).toFixed(1)} MB  ${rate.toFixed(1)} MB/s`;
    if (stream.isTTY) stream.write(`\r${line}${share >= 1 ? '\n' : ''}`);
    else if (Math.floor(share * 10) !== lastTenth) {
      lastTenth = Math.floor(share * 10);
      stream.write(`${line}\n`);
    }
  };
}

export interface UploadCommand {
  file: string;
  name?: string;
  organizationId: number;
  /** Base URL of the server that takes the bytes. */
  base: string;
  wait: boolean;
  /** Where unfinished uploads are remembered, so that running the command again resumes. */
  resumeFile: string;
}

export interface UploadOutcome {
  video_id: number;
  player_uuid: string;
  watch_url: string;
  status: string | null;
  error_message?: string | null;
}

/**
 * `reelbase upload FILE`: a capability from the uploads service, then the bytes through the server's
 * tus endpoint with tus-js-client (chunks, retries). An interrupted upload of the same file to the
 * same server is resumed from its offset when the command runs again (remembered in `resumeFile`).
 */
export async function uploadFile(services: Services, command: UploadCommand): Promise<UploadOutcome> {
  const file = path.resolve(command.file);
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new Error(`${command.file} is not a file`);
  const base = command.base.replace(/\/+$/, '');
  const storage = new FileUrlStorage(command.resumeFile);
  const fingerprint = ['reelbase', file, stat.size, stat.mtimeMs, base].join('|');

  // An unfinished upload of this file to this server, if its capability still takes bytes.
  let target: { url: string; video_id: number; player_uuid: string } | null = null;
  for (const previous of await storage.findUploadsByFingerprint(fingerprint)) {
    const meta = previous.metadata as Record<string, string>;
    const row = meta.upload_id ? await services.uploads.find(meta.upload_id) : undefined;
    if (row?.status === 'pending' && row.expires_at > Date.now() / 1000 && previous.uploadUrl) {
      target = { url: previous.uploadUrl, video_id: Number(meta.video_id), player_uuid: meta.player_uuid };
      process.stderr.write(`Resuming the upload of ${command.file} (video ${meta.video_id})\n`);
      break;
    }
    await storage.removeUpload(previous.urlStorageKey);
  }
  let uploadId: string | null = null;
  if (!target) {
    const name = command.name ?? (path.basename(file, path.extname(file)) || path.basename(file));
    const created = await services.uploads.create(command.organizationId, { name });
    uploadId = created.id;
    // The capability names this server's public address: the bytes go to the one asked for.
    target = { url: `${base}${new URL(created.url).pathname}`, video_id: created.video_id, player_uuid: created.player_uuid };
  }

  const draw = progressBar(stat.size);
  await new Promise<void>((resolve, reject) => {
    let from = -1;
    const upload = new tus.Upload(fs.createReadStream(file), {
      uploadSize: stat.size,
      chunkSize: 8 * 1024 * 1024,
      retryDelays: [0, 1000, 3000, 5000, 10_000, 20_000],
      urlStorage: storage,
      fingerprint: () => Promise.resolve(fingerprint),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      ...(uploadId === null ? { uploadUrl: target.url } : { endpoint: target.url }),
      metadata: {
        filename: path.basename(file),
        upload_id: uploadId ?? new URL(target.url).pathname.split('/')[2],
        video_id: String(target.video_id),
        player_uuid: target.player_uuid,
      },
      onProgress: (sent) => {
        if (from < 0) from = sent;
        draw(sent, from);
      },
      onSuccess: () => resolve(),
      onError: (err) => reject(new Error(`The upload failed: ${err.message}`)),
    });
    upload.start();
  });

  let video = await services.videos.get(command.organizationId, target.video_id);
  while (command.wait && video.status !== 'ready' && video.status !== 'error') {
    await new Promise((r) => setTimeout(r, 500));
    video = await services.videos.get(command.organizationId, target.video_id);
  }
  return {
    video_id: target.video_id,
    player_uuid: target.player_uuid,
    watch_url: `${base}/watch/${target.player_uuid}`,
    status: video.status,
    ...(video.status === 'error' ? { error_message: video.error_message } : {}),
  };
}
