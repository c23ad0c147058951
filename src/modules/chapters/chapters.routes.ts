import type { App, Deps } from '../../http/context.ts';
import { Chapter, ChapterParams, CreateChapterBody, UpdateChapterBody } from './chapters.schemas.ts';

const tags = ['chapters'];

export default async function chaptersRoutes(app: App, { services }: Deps) {
  const chapters = services.chapters;

  app.post(
    '/v1/chapters',
    {
      config: { wrap: 'chapter' },
      schema: { tags, summary: 'Add a chapter to a player', body: CreateChapterBody, response: { 201: Chapter } },
    },
    async (req, reply) => reply.code(201).send(await chapters.create(req.auth.organizationId, req.body)),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/v1/chapters/:id',
      config: { wrap: 'chapter' },
      schema: { tags, summary: 'Update a chapter (position, video)', params: ChapterParams, body: UpdateChapterBody, response: { 200: Chapter } },
      handler: async (req) => chapters.update(req.auth.organizationId, req.params.id, req.body),
    });
  }

  app.get(
    '/v1/chapters/:id',
    {
      schema: { tags, summary: 'Get a chapter', params: ChapterParams, response: { 200: Chapter } },
    },
    async (req) => chapters.get(req.auth.organizationId, req.params.id),
  );

  app.delete(
    '/v1/chapters/:id',
    {
      schema: { tags, summary: 'Delete a chapter (its video stays)', params: ChapterParams, response: { 200: Chapter } },
    },
    async (req) => chapters.delete(req.auth.organizationId, req.params.id),
  );
}
