import { FileStore } from '@tus/file-store';
import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import type { Config } from '../../config.ts';

/** A tus store whose finished uploads can be read back (both @tus/file-store and @tus/s3-store can). */
export type UploadBytes = DataStore & { read(id: string): Readable | Promise<Readable> };

/**
 * Where unfinished uploads' bytes live: @tus/file-store under MEDIA_DIR/.uploads (offsets survive a
 * restart: they are the files' sizes, with each upload's metadata beside it). Expiry is the uploads
 * area's (the `upload.expire` job), so the store's own expiration only announces Upload-Expires.
 */
export function createUploadBytes(config: Config): UploadBytes {
  return new FileStore({ directory: config.uploads.dir, expirationPeriodInMilliseconds: config.uploads.expiryHours * 3600 * 1000 });
}
