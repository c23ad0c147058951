import path from 'node:path';
import type { Config } from '../config.ts';
import { LocalFileStore, type FileStore } from './file-store.ts';
import { UrlSigner } from './signed-urls.ts';

/** Public path under which stored files are served (GET /media/files/<key>?expires=&signature=). */
export const MEDIA_FILES_PATH = '/media/files/';

/** The media layer as modules and jobs use it: where files live and how they are linked to. */
export interface Media {
  store: FileStore;
  signer: UrlSigner;
  /** Local scratch space for jobs (downloads, ffmpeg outputs) before files go into the store. */
  workDir: string;
  /** A signed, expiring URL of a stored file. */
  fileUrl(key: string, nowSeconds?: number): string;
}

export function createMedia(config: Config, store: FileStore = new LocalFileStore(config.mediaDir)): Media {
  if (!config.signingSecret) throw new Error('config.signingSecret must be resolved before media is used');
  const signer = new UrlSigner(config.signingSecret, config.publicUrl, config.mediaUrlTtlSeconds);
  return {
    store,
    signer,
    // Inside the media folder (keys never start with a dot), so that finished files are renamed
    // into the local store rather than copied.
    workDir: path.join(config.mediaDir, '.work'),
    fileUrl: (key, now = Math.floor(Date.now() / 1000)) => signer.sign(`${MEDIA_FILES_PATH}${key}`, now),
  };
}
