import type { App, Deps } from '../../http/context.ts';
import { sendFile } from '../../http/file-response.ts';
import { Type } from 'typebox';
import { isMaster } from '../../media/hls.ts';
import { MEDIA_FILES_PATH, MEDIA_FOLDERS_PATH, MEDIA_SUBTITLES_PATH } from '../../media/media.ts';

const HLS = 'application/vnd.apple.mpegurl';

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
      if (!isMaster(params['*'])) return sendFile(req, reply, await files.resolveFolder(params.token, params['*'], req.ip));
      const text = await files.folderMaster(params.token, params['*'], req.ip);
      // Short: captions published meanwhile join the master at the next load.
      return reply
        .header('cache-control', 'private, max-age=60')
        .type(HLS)
        .send(req.method === 'HEAD' ? undefined : text);
    },
  });

  // A caption's subtitles playlist, as the master above names it.
  app.get(
    `${MEDIA_SUBTITLES_PATH}:file`,
    { config: { public: true, media: true }, schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: '^[0-9]{1,10}\\.m3u8$' }) }) } },
    async (req, reply) => {
      const query = req.query as Record<string, unknown>;
      const text = await files.subtitles(Number.parseInt(req.params.file, 10), query.expires, query.signature, req.ip);
      return reply.header('cache-control', 'private, max-age=300').type(HLS).send(text);
    },
  );
}
