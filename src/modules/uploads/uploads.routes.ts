import type { App, Deps } from '../../http/context.ts';
import { CreateUploadBody, Upload } from './uploads.schemas.ts';

const tags = ['uploads'];

export default async function uploadsRoutes(app: App, { services }: Deps) {
  app.post(
    '/v1/uploads',
    {
      config: { wrap: 'upload' },
      schema: {
        tags,
        summary: 'Start a direct upload: a video (and its facade player) waiting for its file, and the tus URL to send the file to',
        body: CreateUploadBody,
        response: { 201: Upload },
      },
    },
    async (req, reply) => reply.code(201).send(await services.uploads.create(req.auth.organizationId, req.body)),
  );
}
