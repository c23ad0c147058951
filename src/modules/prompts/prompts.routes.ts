import type { App, Deps } from '../../http/context.ts';
import { GeneratedScript, GenerateScriptQuery, Prompt, PromptQuery, PutPromptBody } from './prompts.schemas.ts';

export default async function promptsRoutes(app: App, { services }: Deps) {
  const service = services.prompts;

  app.get(
    '/v1/prompts',
    {
      schema: {
        tags: ['prompts'],
        summary: "The organization's prompt of a type (default `global`), or the built-in one",
        querystring: PromptQuery,
        response: { 200: Prompt },
      },
    },
    async (request) => service.get(request.auth.organizationId, request.query.type),
  );

  app.put(
    '/v1/prompts',
    {
      config: { wrap: 'prompt' },
      schema: {
        tags: ['prompts'],
        summary: "Set the organization's prompt of a type (201 when created, 200 when replaced)",
        body: PutPromptBody,
        response: { 200: Prompt, 201: Prompt },
      },
    },
    async (request, reply) => {
      const { prompt, created } = await service.put(request.auth.organizationId, request.body);
      return reply.code(created ? 201 : 200).send(prompt);
    },
  );

  app.delete(
    '/v1/prompts',
    {
      schema: {
        tags: ['prompts'],
        summary: "Remove the organization's prompt of a type; the built-in one applies again",
        querystring: PromptQuery,
        response: { 200: Prompt },
      },
    },
    async (request) => service.delete(request.auth.organizationId, request.query.type),
  );

  app.get(
    '/v1/generate_script',
    {
      schema: {
        tags: ['prompts'],
        summary: 'Generate a deterministic video script outline from the prompt of a type',
        querystring: GenerateScriptQuery,
        response: { 200: GeneratedScript },
      },
    },
    async (request) => service.generateScript(request.auth.organizationId, request.query),
  );
}
