import type { App, Deps } from '../../http/context.ts';
import { mapMaybe } from '../../lib/maybe-promise.ts';
import { sharedBodySender } from '../../http/shared-body.ts';
import { answerEnvelope } from '../../http/paging.ts';
import {
  Cta,
  CtaCreateBody,
  CtaList,
  ChapterParams,
  CtaListQuery,
  CtaMeta,
  CtaParams,
  CtaUpdateBody,
  EmailGate,
  EmailGateCreateBody,
  PlayerCtaListQuery,
  PlayerParams,
  UuidParams,
} from './ctas.schemas.ts';

const tags = ['ctas'];

export default async function ctasRoutes(app: App, { config, services }: Deps) {
  const ctas = services.ctas;

  app.post(
    '/v1/ctas',
    {
      config: { wrap: 'cta' },
      schema: {
        tags,
        summary: 'Create a CTA (without chapter_id: an organization default CTA)',
        body: CtaCreateBody,
        response: { 201: Cta },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return ctas.create(request.auth.organizationId, request.body);
    },
  );

  app.post(
    '/v1/ctas/default_email_gate',
    {
      config: { wrap: 'cta' },
      schema: {
        tags,
        summary: 'Create the default email gate on a chapter',
        body: EmailGateCreateBody,
        response: { 201: EmailGate },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return ctas.createEmailGate(request.auth.organizationId, request.body);
    },
  );

  const sendCta = sharedBodySender();
  app.get(
    '/v1/ctas/:id',
    {
      schema: { tags, summary: 'Get a CTA', params: CtaParams, response: { 200: Cta } },
      // Not async: a cached CTA is answered in the same tick, its body serialized once (docs/performance.md).
    },
    (request, reply) => mapMaybe(ctas.get(request.auth.organizationId, request.params.id), (cta) => sendCta(reply, cta)),
  );

  app.patch(
    '/v1/ctas/:id',
    {
      config: { wrap: 'cta' },
      schema: { tags, summary: 'Update a CTA', params: CtaParams, body: CtaUpdateBody, response: { 200: Cta } },
    },
    async (request) => ctas.update(request.auth.organizationId, request.params.id, request.body),
  );

  app.delete(
    '/v1/ctas/:id',
    {
      schema: { tags, summary: 'Delete a CTA; answers the deleted CTA', params: CtaParams, response: { 200: Cta } },
    },
    async (request) => ctas.remove(request.auth.organizationId, request.params.id),
  );

  app.get(
    '/v1/chapters/:id/ctas',
    {
      config: { list: 'ctas' },
      schema: { tags, summary: "A chapter's CTAs", params: ChapterParams, querystring: CtaListQuery, response: { 200: CtaList } },
    },
    async (request) =>
      answerEnvelope('ctas', request.query, config.listDefaultCap, (page) => ctas.listForChapter(request.auth.organizationId, request.params.id, page)),
  );

  // `/players/uuid=:uuid/...` is a static prefix plus a parameter in find-my-way: it wins over
  // `/players/:id/...` for paths starting with `uuid=` and leaves every other path to it.
  app.get(
    '/v1/players/:id/ctas',
    {
      config: { list: 'ctas' },
      schema: { tags, summary: "A player's CTAs", params: PlayerParams, querystring: PlayerCtaListQuery, response: { 200: CtaList } },
    },
    async (request) =>
      answerEnvelope('ctas', request.query, config.listDefaultCap, (page) =>
        ctas.listForPlayer(request.auth.organizationId, { id: request.params.id }, request.query.include_defaults ?? false, page),
      ),
  );

  app.get(
    '/v1/players/uuid=:uuid/ctas',
    {
      config: { list: 'ctas' },
      schema: { tags, summary: "A player's CTAs, by player UUID", params: UuidParams, querystring: PlayerCtaListQuery, response: { 200: CtaList } },
    },
    async (request) =>
      answerEnvelope('ctas', request.query, config.listDefaultCap, (page) =>
        ctas.listForPlayer(request.auth.organizationId, { uuid: request.params.uuid }, request.query.include_defaults ?? false, page),
      ),
  );

  app.get(
    '/v1/players/:id/cta_meta',
    {
      schema: { tags, summary: "Counts of a player's public and draft CTAs", params: PlayerParams, response: { 200: CtaMeta } },
    },
    async (request) => ctas.meta(request.auth.organizationId, { id: request.params.id }),
  );

  app.get(
    '/v1/players/uuid=:uuid/cta_meta',
    {
      schema: { tags, summary: "Counts of a player's public and draft CTAs, by player UUID", params: UuidParams, response: { 200: CtaMeta } },
    },
    async (request) => ctas.meta(request.auth.organizationId, { uuid: request.params.uuid }),
  );
}
