import type { App, Deps } from '../../http/context.ts';
import { sendFile } from '../../http/file-response.ts';
import { MEDIA_FILES_PATH, MEDIA_FOLDERS_PATH } from '../../media/media.ts';

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
      const file = await files.resolve(req.url.split('?')[0], query.expires, query.signature, req.ip);
      return sendFile(req, reply, file);
    },
  });

  // An HLS ladder by folder link: the token in the path covers every key under its folder.
  app.route({
    method: ['GET', 'HEAD'],
    url: `${MEDIA_FOLDERS_PATH}:token/*`,
    exposeHeadRoute: false,
    config: { public: true, media: true },
    schema: { hide: true },
    handler: async (req, reply) => {
      const params = req.params as { token: string; '*': string };
      return sendFile(req, reply, await files.resolveFolder(params.token, params['*'], req.ip));
    },
  });
}
