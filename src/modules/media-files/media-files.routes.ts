import type { App, Deps } from '../../http/context.ts';
import { sendError } from '../../http/error-handler.ts';
import { MEDIA_FILES_PATH } from '../../media/media.ts';

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * GET/HEAD /media/files/<key>?expires=&signature=: stored media served by signed URL (outside
 * /dashboard, no token: the signature is the authorization). Range requests are answered with 206.
 */
export default async function mediaFilesRoutes(app: App, { services }: Deps) {
  const files = services.mediaFiles;

  app.route({
    method: ['GET', 'HEAD'],
    url: `${MEDIA_FILES_PATH}*`,
    exposeHeadRoute: false,
    config: { public: true, media: true },
    schema: { hide: true },
    handler: async (req, reply) => {
      const query = req.query as Record<string, unknown>;
      const answer = await files.open({
        path: req.url.split('?')[0],
        expires: query.expires,
        signature: query.signature,
        head: req.method === 'HEAD',
        headers: {
          range: header(req.headers.range),
          ifRange: header(req.headers['if-range']),
          ifNoneMatch: header(req.headers['if-none-match']),
          ifModifiedSince: header(req.headers['if-modified-since']),
        },
      });
      reply.headers(answer.headers);
      if (answer.status === 416) return sendError(reply, 'range_not_satisfiable');
      reply.code(answer.status);
      return reply.send(answer.body ?? undefined);
    },
  });
}
