import type { Readable } from 'node:stream';
import { AppError, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { contentTypeOf } from '../../media/content-types.ts';
import { isValidKey } from '../../media/file-store.ts';
import { MEDIA_FILES_PATH, type Media } from '../../media/media.ts';
import { parseRange } from '../../media/range.ts';

export interface FileRequest {
  /** The request path, as sent (what was signed). */
  path: string;
  expires: unknown;
  signature: unknown;
  headers: { range?: string; ifRange?: string; ifNoneMatch?: string; ifModifiedSince?: string };
  /** HEAD: headers only. */
  head: boolean;
}

export interface FileAnswer {
  status: 200 | 206 | 304 | 416;
  headers: Record<string, string>;
  body: Readable | null;
}

/** Longest a client may cache a file: never past the link's expiry. */
const MAX_CACHE_SECONDS = 86_400;

/**
 * Serves stored files by signed URL: the signature (HMAC over path and expiry) must be valid and
 * unexpired, then the file is answered whole (200), in part (206, one byte range), not at all
 * (304 when the client's copy is current, 416 for a range past the end).
 */
export class MediaFilesService {
  constructor(private readonly media: Media) {}

  async open(req: FileRequest): Promise<FileAnswer> {
    const now = nowSeconds();
    const expires = typeof req.expires === 'string' && /^\d{1,12}$/.test(req.expires) ? Number(req.expires) : NaN;
    const signature = typeof req.signature === 'string' ? req.signature : '';
    if (!signature || !this.media.signer.verify(req.path, expires, signature, now)) {
      throw new AppError('forbidden', 'The link is invalid or has expired');
    }
    const key = req.path.slice(MEDIA_FILES_PATH.length);
    if (!req.path.startsWith(MEDIA_FILES_PATH) || !isValidKey(key)) throw notFound('file');
    const stat = await this.media.store.stat(key);
    if (!stat) throw notFound('file');

    const etag = `"${stat.size.toString(16)}-${Math.floor(stat.modifiedMs).toString(16)}"`;
    const lastModified = new Date(stat.modifiedMs).toUTCString();
    const headers: Record<string, string> = {
      'content-type': contentTypeOf(key),
      'accept-ranges': 'bytes',
      etag,
      'last-modified': lastModified,
      'cache-control': `private, max-age=${Math.max(0, Math.min(MAX_CACHE_SECONDS, expires - now))}`,
      'x-content-type-options': 'nosniff',
    };

    if (req.headers.ifNoneMatch !== undefined) {
      const tags = req.headers.ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
      if (tags.includes(etag) || tags.includes('*')) return { status: 304, headers, body: null };
    } else if (req.headers.ifModifiedSince !== undefined) {
      const since = Date.parse(req.headers.ifModifiedSince);
      if (Number.isFinite(since) && Math.floor(stat.modifiedMs / 1000) <= Math.floor(since / 1000)) return { status: 304, headers, body: null };
    }

    // If-Range: the range applies only to the version the client has (else the whole file).
    const ifRange = req.headers.ifRange;
    const rangeApplies = ifRange === undefined || ifRange === etag || ifRange === lastModified;
    const range = rangeApplies ? parseRange(req.headers.range, stat.size) : null;
    if (range === 'unsatisfiable') {
      return { status: 416, headers: { ...headers, 'content-range': `bytes */${stat.size}` }, body: null };
    }
    if (range) {
      const length = range.end - range.start + 1;
      return {
        status: 206,
        headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${stat.size}`, 'content-length': String(length) },
        body: req.head ? null : await this.media.store.createReadStream(key, range),
      };
    }
    return {
      status: 200,
      headers: { ...headers, 'content-length': String(stat.size) },
      body: req.head || stat.size === 0 ? null : await this.media.store.createReadStream(key),
    };
  }
}
