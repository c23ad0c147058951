import { AppError, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { contentTypeOf } from '../../media/content-types.ts';
import { isValidKey } from '../../media/file-store.ts';
import { MEDIA_FILES_PATH, type Media } from '../../media/media.ts';
import type { ByteRange } from '../../media/file-store.ts';
import type { Readable } from 'node:stream';

/** Longest a client may cache a file: never past the link's expiry. */
const MAX_CACHE_SECONDS = 86_400;

/** A stored file a valid link names. */
export interface LinkedFile {
  size: number;
  modifiedMs: number;
  contentType: string;
  maxAgeSeconds: number;
  open(range?: ByteRange): Promise<Readable>;
}

/**
 * Stored files by signed URL: the signature (HMAC over path and expiry) must be valid and unexpired,
 * and the file must exist; the HTTP layer then answers it (ranges, conditional requests).
 */
export class MediaFilesService {
  constructor(private readonly media: Media) {}

  async resolve(linkPath: string, expiresParam: unknown, signatureParam: unknown): Promise<LinkedFile> {
    const now = nowSeconds();
    const expires = typeof expiresParam === 'string' && /^\d{1,12}$/.test(expiresParam) ? Number(expiresParam) : NaN;
    const signature = typeof signatureParam === 'string' ? signatureParam : '';
    if (!signature || !this.media.signer.verify(linkPath, expires, signature, now)) {
      throw new AppError('forbidden', 'The link is invalid or has expired');
    }
    const key = linkPath.slice(MEDIA_FILES_PATH.length);
    if (!linkPath.startsWith(MEDIA_FILES_PATH) || !isValidKey(key)) throw notFound('file');
    const stat = await this.media.store.stat(key);
    if (!stat) throw notFound('file');
    return {
      size: stat.size,
      modifiedMs: stat.modifiedMs,
      contentType: contentTypeOf(key),
      maxAgeSeconds: Math.min(MAX_CACHE_SECONDS, expires - now),
      open: (range) => this.media.store.createReadStream(key, range),
    };
  }
}
