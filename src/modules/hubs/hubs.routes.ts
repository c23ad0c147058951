import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import {
  Category,
  CategoryList,
  CategoryListQuery,
  CategoryParams,
  CreateCategoryBody,
  CreateHubBody,
  Hub,
  HubList,
  HubListQuery,
  HubParams,
  Sitemap,
  UpdateCategoryBody,
  UpdateHubBody,
} from './hubs.schemas.ts';

const tags = ['hubs'];

export default async function hubsRoutes(app: App, { config, services }: Deps) {
  const service = services.hubs;

  app.get(
    '/v1/hubs',
    {
      config: { list: 'hubs' },
      schema: { tags, summary: 'List hubs: a bare array without per_page, {hubs, summary} with it', querystring: HubListQuery, response: { 200: HubList } },
    },
    async (req) => answerArrayOrEnvelope('hubs', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, page)),
  );

  app.post(
    '/v1/hubs',
    {
      config: { wrap: 'hub' },
      schema: { tags, summary: 'Create a hub (slug unique on the server, made from the name when left out)', body: CreateHubBody, response: { 201: Hub } },
    },
    async (req, reply) => reply.code(201).send(await service.create(req.auth.organizationId, req.body)),
  );

  app.get('/v1/hubs/:id', { schema: { tags, summary: 'Get a hub', params: HubParams, response: { 200: Hub } } }, async (req) =>
    service.get(req.auth.organizationId, req.params.id),
  );

  app.patch(
    '/v1/hubs/:id',
    {
      config: { wrap: 'hub' },
      schema: { tags, summary: 'Change a hub (a new name keeps the slug)', params: HubParams, body: UpdateHubBody, response: { 200: Hub } },
    },
    async (req) => service.update(req.auth.organizationId, req.params.id, req.body),
  );

  app.delete(
    '/v1/hubs/:id',
    { schema: { tags, summary: 'Delete a hub and its categories; answers the deleted hub', params: HubParams, response: { 200: Hub } } },
    async (req) => service.delete(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/hubs/:id/sitemap',
    { schema: { tags, summary: "The address of the hub's public sitemap", params: HubParams, response: { 200: Sitemap } } },
    async (req) => service.sitemap(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/hubs/:id/categories',
    {
      config: { list: 'categories' },
      schema: {
        tags,
        summary: "The hub's categories in position order: a bare array without per_page, {categories, summary} with it",
        params: HubParams,
        querystring: CategoryListQuery,
        response: { 200: CategoryList },
      },
    },
    async (req) =>
      answerArrayOrEnvelope('categories', req.query, config.listDefaultCap, (page) => service.listCategories(req.auth.organizationId, req.params.id, page)),
  );

  app.post(
    '/v1/hubs/:id/categories',
    {
      config: { wrap: 'category' },
      schema: {
        tags,
        summary: 'Add a category at position (the end by default), with its players in order',
        params: HubParams,
        body: CreateCategoryBody,
        response: { 201: Category },
      },
    },
    async (req, reply) => reply.code(201).send(await service.createCategory(req.auth.organizationId, req.params.id, req.body)),
  );

  app.patch(
    '/v1/hubs/:id/categories/:category_id',
    {
      config: { wrap: 'category' },
      schema: {
        tags,
        summary: 'Change a category: position moves it, player_ids replaces its players',
        params: CategoryParams,
        body: UpdateCategoryBody,
        response: { 200: Category },
      },
    },
    async (req) => service.updateCategory(req.auth.organizationId, req.params.id, req.params.category_id, req.body),
  );

  app.delete(
    '/v1/hubs/:id/categories/:category_id',
    {
      schema: {
        tags,
        summary: 'Delete a category (the later ones move up); answers the deleted category',
        params: CategoryParams,
        response: { 200: Category },
      },
    },
    async (req) => service.deleteCategory(req.auth.organizationId, req.params.id, req.params.category_id),
  );
}
