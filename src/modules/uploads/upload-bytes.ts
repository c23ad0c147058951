import type { Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import type * as S3 from '@aws-sdk/client-s3';
import type * as TusS3 from '@tus/s3-store';
import type { DataStore } from '@tus/utils';
import type { Config } from '../../config.ts';
import { storageClientConfig } from '../../media/media.ts';
import { whenUsed } from '../../lib/when-used.ts';

const sdk = whenUsed<typeof S3>('@aws-sdk/client-s3');
const tusS3 = whenUsed<typeof TusS3>('@tus/s3-store');

/**
 * Where unfinished uploads' bytes live, as the uploads area sees them: by the upload's id. The tus
 * store @tus/server writes to is `datastore`, where an upload's file id is `fileId(uploadId)`.
 */
export interface UploadBytes {
  datastore: DataStore;
  fileId(uploadId: string): string;
  /** The upload id a tus file id names; null when it names none of ours. */
  uploadIdOf(fileId: string): string | null;
  read(uploadId: string): Promise<Readable>;
  remove(uploadId: string): Promise<void>;
  /** Bytes received so far, and the declared size; null when nothing was created. */
  progress(uploadId: string): Promise<{ offset: number; size?: number } | null>;
}

type ReadableStore = DataStore & { read(id: string): Readable | Promise<Readable> };

/**
 * @tus/file-store, without the folder check its constructor starts and does not wait for (its callback
 * throws, outside any promise, if the folder's parent goes meanwhile: an uncaught exception). Creating
 * an upload makes the folder anyway.
 */
class UploadFileStore extends FileStore {}
(UploadFileStore.prototype as unknown as { checkOrCreateDirectory: () => void }).checkOrCreateDirectory = () => {};

/**
 * @tus/file-store under MEDIA_DIR/.uploads locally; @tus/s3-store in the bucket under `PREFIX/tus/` with
 * STORAGE_URL (so that every API node sees every upload's offset). Offsets survive restarts either way.
 * Expiry is the uploads area's (the `upload.expire` job); the store's expiration only announces
 * Upload-Expires.
 */
export function createUploadBytes(config: Config): UploadBytes {
  const expirationPeriodInMilliseconds = config.uploads.expiryHours * 3600 * 1000;
  let datastore: ReadableStore;
  let prefix = '';
  let remove = (fileId: string) => datastore.remove(fileId);
  if (config.storage.kind === 's3') {
    const bucket = config.storage.location.bucket;
    datastore = new (tusS3().S3Store)({
      partSize: 8 * 1024 * 1024,
      expirationPeriodInMilliseconds,
      s3ClientConfig: { ...storageClientConfig(config), bucket },
    });
    prefix = `${config.storage.location.prefix ? `${config.storage.location.prefix}/` : ''}tus/`;
    const client = new (sdk().S3Client)(storageClientConfig(config));
    // @tus/s3-store's remove stops at the abort of a multipart upload that completed (S3 answers
    // NoSuchUpload) and leaves the object: a finished upload's objects are deleted here.
    remove = async (fileId) => {
      await datastore.remove(fileId).catch(() => {});
      const Objects = [fileId, `${fileId}.info`, `${fileId}.part`].map((Key) => ({ Key }));
      await client.send(new (sdk().DeleteObjectsCommand)({ Bucket: bucket, Delete: { Objects, Quiet: true } }));
    };
  } else {
    datastore = new UploadFileStore({ directory: config.uploads.dir, expirationPeriodInMilliseconds });
  }
  const fileId = (uploadId: string) => `${prefix}${uploadId}`;
  return {
    datastore,
    fileId,
    uploadIdOf: (id) => (id.startsWith(prefix) ? id.slice(prefix.length) : null),
    read: async (uploadId) => datastore.read(fileId(uploadId)),
    remove: (uploadId) => remove(fileId(uploadId)),
    progress: async (uploadId) => {
      const upload = await datastore.getUpload(fileId(uploadId)).catch(() => null);
      return upload ? { offset: upload.offset, size: upload.size } : null;
    },
  };
}
