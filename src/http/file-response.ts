import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseRange } from '../media/range.ts';
import type { ServedFile } from '../media/served-file.ts';
import { sendError } from './error-handler.ts';

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * Answers a file the HTTP way: whole (200), in part (206, one byte range), not at all (304 when the
 * client's copy is current, 416 for a range past the end), HEAD without the body.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: ServedFile) {
  // Redirect delivery (MEDIA_DELIVERY=redirect): the rules were applied; the bytes (ranges included) come from the store.
  if (file.redirect)
    return reply
      .code(302)
      .header('cache-control', 'private, no-store')
      .header('location', await file.redirect())
      .send();
  const etag = `"${file.size.toString(16)}-${Math.floor(file.modifiedMs).toString(16)}"`;
  const lastModified = new Date(file.modifiedMs).toUTCString();
  reply.headers({
    'content-type': file.contentType,
    'accept-ranges': 'bytes',
    etag,
    'last-modified': lastModified,
    'cache-control': `private, max-age=${Math.max(0, file.maxAgeSeconds)}`,
    'x-content-type-options': 'nosniff',
  });

  const ifNoneMatch = header(request.headers['if-none-match']);
  const ifModifiedSince = header(request.headers['if-modified-since']);
  if (ifNoneMatch !== undefined) {
    const tags = ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
    if (tags.includes(etag) || tags.includes('*')) return reply.code(304).send();
  } else if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    if (Number.isFinite(since) && Math.floor(file.modifiedMs / 1000) <= Math.floor(since / 1000)) return reply.code(304).send();
  }

  // If-Range: the range applies only to the version the client has (else the whole file).
  const ifRange = header(request.headers['if-range']);
  const rangeApplies = ifRange === undefined || ifRange === etag || ifRange === lastModified;
  const range = rangeApplies ? parseRange(header(request.headers.range), file.size) : null;
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${file.size}`);
    return sendError(reply, 'range_not_satisfiable');
  }
  const head = request.method === 'HEAD';
  // The file can go between its stat and its read (deleted by another process): a 404, not a 500.
  const open = async (r?: { start: number; end: number }) => {
    try {
      return await file.open(r);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
      .header('content-length', String(range.end - range.start + 1));
    if (head) return reply.send();
    const stream = await open(range);
    return stream ? reply.send(stream) : sendError(reply, 'not_found', '404: No file exists');
  }
  reply.code(200).header('content-length', String(file.size));
  if (head || file.size === 0) return reply.send();
  const stream = await open();
  return stream ? reply.send(stream) : sendError(reply, 'not_found', '404: No file exists');
}
