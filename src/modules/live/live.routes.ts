import type { App, Deps } from '../../http/context.ts';
import { listEnvelope } from '../../http/paging.ts';
import { pageOf } from '../../lib/paging.ts';
import {
  CreateLiveBody,
  LiveCreated,
  LiveDetail,
  LiveHealth,
  LiveInstanceParams,
  LiveList,
  LiveListQuery,
  LiveParams,
  LiveSuccess,
  UpdateLiveBody,
} from './live.schemas.ts';

const tags = ['live streams'];
const base = '/v1/organizations/:current_organization_id/live';

/** The live stream operations of the spec (docs/live.md). Writes need `live:manage`. */
export default async function liveRoutes(app: App, { config, services }: Deps) {
  const live = services.live;

  app.post(
    base,
    {
      config: { permission: 'live:manage' },
      schema: {
        tags,
        summary: 'Create a live stream and its first instance (with its own player and video)',
        params: LiveParams,
        body: CreateLiveBody,
        response: { 201: LiveCreated },
      },
    },
    async (req, reply) => reply.code(201).send(await live.create(req.auth, req.params.current_organization_id, req.body)),
  );

  app.get(
    base,
    {
      config: { list: 'stream_instances' },
      schema: {
        tags,
        summary: 'List stream instances; order_by/direction apply only with per_page or page',
        params: LiveParams,
        querystring: LiveListQuery,
        response: { 200: LiveList },
      },
    },
    async (req) => {
      const page = pageOf(req.query, config.listDefaultCap);
      const { items, total } = await live.list(req.auth, req.params.current_organization_id, req.query, page);
      const envelope = listEnvelope('stream_instances', items, page, total);
      // summary first, as the spec shows it.
      return { summary: envelope.summary, stream_instances: envelope.stream_instances };
    },
  );

  app.get(
    `${base}/:live_stream_instance_id`,
    {
      schema: {
        tags,
        summary: 'A stream instance with its stream; keys only for roles that may manage live streams',
        params: LiveInstanceParams,
        response: { 200: LiveDetail },
      },
    },
    async (req) => live.get(req.auth, req.params.current_organization_id, req.params.live_stream_instance_id),
  );

  app.patch(
    `${base}/:live_stream_instance_id`,
    {
      config: { permission: 'live:manage' },
      schema: {
        tags,
        summary: 'Update name, description, DVR, air date or tags',
        params: LiveInstanceParams,
        body: UpdateLiveBody,
        response: { 200: LiveSuccess },
      },
    },
    async (req) => live.update(req.auth, req.params.current_organization_id, req.params.live_stream_instance_id, req.body),
  );

  app.delete(
    `${base}/:live_stream_instance_id`,
    {
      config: { permission: 'live:manage' },
      schema: {
        tags,
        summary: 'Delete an instance (its stream too when it is the current one: the key stops working, a publisher is cut)',
        params: LiveInstanceParams,
        response: { 200: LiveSuccess },
      },
    },
    async (req) => live.delete(req.auth, req.params.current_organization_id, req.params.live_stream_instance_id),
  );

  app.get(
    `${base}/:live_stream_instance_id/health`,
    {
      schema: {
        tags,
        summary: 'Health of the incoming primary and backup streams (null when nothing arrives)',
        params: LiveInstanceParams,
        response: { 200: LiveHealth },
      },
    },
    async (req) => live.health(req.auth, req.params.current_organization_id, req.params.live_stream_instance_id),
  );
}
