import path from 'node:path';
import type { Config } from '../config.ts';
import { LocalFileStore, type FileStore } from './file-store.ts';
import { UrlSigner } from './signed-urls.ts';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { ObjectIndex } from './object-index.ts';
import { S3FileStore } from './s3-file-store.ts';

/** Public path under which stored files are served (GET /media/files/<key>?expires=&signature=). */
export const MEDIA_FILES_PATH = '/media/files/';
/** Public path of folder links (an HLS ladder: GET /media/folders/<token>/<key>). */
export const MEDIA_FOLDERS_PATH = '/media/folders/';

/** Public path of a published caption's subtitles playlist, named by the API's HLS master (GET /media/subtitles/<id>.m3u8?expires=&signature=). */
export const MEDIA_SUBTITLES_PATH = '/media/subtitles/';

/** The media layer as modules and jobs use it: where files live and how they are linked to. */
export interface Media {
  store: FileStore;
  signer: UrlSigner;
  /** Local scratch space for jobs (downloads, ffmpeg outputs) before files go into the store. */
  workDir: string;
  /** A signed, expiring URL of a stored file. */
  fileUrl(key: string, nowSeconds?: number): string;
  /** A signed, expiring URL of `prefix/file` that admits every key under `prefix` (relative URIs of playlists). */
  folderUrl(prefix: string, file: string, nowSeconds?: number): string;
}

/** The S3 client settings of STORAGE_URL (credentials from the standard AWS variables or files). */
export function storageClientConfig(config: Config): S3ClientConfig {
  if (config.storage.kind !== 's3') throw new Error('no object storage configured');
  const { endpoint, region, forcePathStyle, credentials } = config.storage;
  return {
    region,
    forcePathStyle,
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    // Checksums only where S3 requires them: the SDK's default streams bodies as aws-chunked with a
    // trailing checksum, which many S3-compatible servers store as it is (framing included).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

/**
 * The media store of the configuration: S3 with STORAGE_URL (which keeps its keys in `index`, the
 * database's stored_objects), else the local MEDIA_DIR.
 */
export function createFileStore(config: Config, index?: ObjectIndex): FileStore {
  if (config.storage.kind === 'local') return new LocalFileStore(config.mediaDir);
  if (!index) throw new Error('an S3 media store needs the object index of its database');
  return new S3FileStore({
    client: storageClientConfig(config),
    location: config.storage.location,
    index,
    // Presigned URLs outlive the redirect only long enough for a player to follow it and read.
    redirectSeconds: config.storage.delivery === 'redirect' ? 600 : undefined,
    readCacheBytes: config.storage.readCacheBytes,
  });
}

export function createMedia(config: Config, store: FileStore = createFileStore(config)): Media {
  if (!config.signingSecret) throw new Error('config.signingSecret must be resolved before media is used');
  const signer = new UrlSigner(config.signingSecret, config.publicUrl, config.mediaUrlTtlSeconds);
  return {
    store,
    signer,
    // Inside the media folder (keys never start with a dot), so that finished files are renamed
    // into the local store rather than copied.
    workDir: path.join(config.mediaDir, '.work'),
    fileUrl: (key, now = Math.floor(Date.now() / 1000)) => signer.sign(`${MEDIA_FILES_PATH}${key}`, now),
    folderUrl: (prefix, file, now = Math.floor(Date.now() / 1000)) => signer.signFolder(MEDIA_FOLDERS_PATH, prefix, file, now),
  };
}
