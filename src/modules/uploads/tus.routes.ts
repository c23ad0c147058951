import type { Server } from '@tus/server';
import { ERRORS } from '@tus/utils';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, Deps } from '../../http/context.ts';
import { UploadRefused, type UploadRefusal } from './uploads.service.ts';

/** `/uploads/<id>/<secret>`: the capability URL that POST /v1/uploads answers. */
const CAPABILITY = /^\/uploads\/([0-9a-f]{24})\/([A-Za-z0-9_-]{43})\/?$/;

/** Whether a raw request is for the tus endpoint (its bodies may take long: src/http/request-deadlines.ts). */
export const isTusRequest = (url: string) => url.startsWith('/uploads/');

const STATUS: Record<UploadRefusal, number> = { unknown: 404, expired: 410, finished: 409, started: 409 };

function capabilityOf(url: string): { id: string; secret: string } | null {
  const match = CAPABILITY.exec(new URL(url, 'http://x').pathname);
  return match ? { id: match[1], secret: match[2] } : null;
}

/** An error @tus/server answers with its `status_code` and `body`. */
class TusRefusal extends Error {
  readonly body: string;
  constructor(
    readonly status_code: number,
    message: string,
  ) {
    super(message);
    this.body = `${message}\n`;
  }
}
const refusal = (status: number, message: string) => new TusRefusal(status, message);

/**
 * The tus 1.0 endpoint of direct uploads (docs/uploads.md), served by @tus/server: creation (POST to
 * the capability URL, which is also the upload's URL), HEAD, PATCH, termination (DELETE) and
 * expiration. No API token: the capability's secret is checked on every request, and its state
 * decides (one upload, before it expires). GET is not served: an upload is not a way to share a file.
 */
export default async function tusRoutes(app: App, { config, services }: Deps) {
  const uploads = services.uploads;
  const bytes = services.uploadBytes;
  // Loaded at the first upload request, not at start (with what it brings: ~70 ms of a cold start).
  let server: Promise<Server> | undefined;
  const tusServer = () => (server ??= import('@tus/server').then(({ Server }) => createServer(Server)));
  const createServer = (TusServer: typeof Server) =>
    new TusServer({
      path: '/uploads',
      datastore: bytes.datastore,
      // One writer per upload across every API process (src/modules/uploads/upload-locker.ts).
      locker: services.uploadLocker,
      maxSize: config.maxUploadBytes,
      namingFunction: (req) => {
        const capability = capabilityOf(req.url);
        if (!capability) throw refusal(404, 'No such upload');
        return bytes.fileId(capability.id);
      },
      getFileIdFromRequest: (req) => {
        const capability = capabilityOf(req.url);
        return capability ? bytes.fileId(capability.id) : undefined;
      },
      // The upload lives at the URL it was created at: answered as a path, which every client resolves
      // against the address it used (a proxy's, an internal one, PUBLIC_URL).
      generateUrl: (req) => {
        const capability = capabilityOf(req.url);
        return capability ? `/uploads/${capability.id}/${capability.secret}` : '/uploads/';
      },
      onIncomingRequest: async (req, id) => {
        const capability = capabilityOf(req.url);
        if (!capability || bytes.uploadIdOf(id) !== capability.id) throw refusal(404, 'No such upload');
        try {
          await uploads.admit(capability.id, capability.secret, req.method);
        } catch (err) {
          if (err instanceof UploadRefused) throw refusal(STATUS[err.reason], err.message);
          throw err;
        }
      },
      onResponseError: async (req, err) => {
        const capability = capabilityOf(req.url);
        // Bytes past MAX_UPLOAD_BYTES with a deferred length: nothing of that upload is kept (a new POST
        // may start it again). Only for a PATCH that passed the capability check (its secret), and only
        // when the size was not declared: an upload that overshoots its own declared size keeps its bytes.
        if ('status_code' in err && err.status_code === 413 && req.method === 'PATCH' && capability)
          await uploads.discardOversized(capability.id, capability.secret);
        // Another request still writes this upload (it was asked to stop): the client tries again, as tus clients do.
        if (err === ERRORS.ERR_LOCK_TIMEOUT) return { status_code: 423, body: 'The upload is being written by another request: try again\n' };
        return undefined;
      },
      onUploadFinish: async (_req, upload) => {
        const id = bytes.uploadIdOf(upload.id);
        if (id) await uploads.finish(id, upload.size ?? upload.offset);
        return {};
      },
    });

  // tus PATCH bodies are read by @tus/server from the raw request, as a stream: Fastify must not.
  app.addContentTypeParser('application/offset+octet-stream', (_request, _payload, done) => done(null));

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const tus = await tusServer();
    reply.hijack();
    await tus.handle(request.raw, reply.raw);
  };
  app.route({
    method: ['POST', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/uploads/:id/:secret',
    config: { public: true, media: true },
    schema: { hide: true },
    handler: handle,
  });
}
