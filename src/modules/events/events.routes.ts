import type { App, Deps } from '../../http/context.ts';
import { mapMaybe } from '../../lib/maybe-promise.ts';
import { sharedBodySender } from '../../http/shared-body.ts';
import { answerEnvelope } from '../../http/paging.ts';
import { pageOf } from '../../lib/paging.ts';
import {
  Event,
  EventCreateBody,
  EventDuplicateBody,
  EventList,
  EventListQuery,
  EventMeta,
  EventMetaQuery,
  EventSearchQuery,
  EventUpdateBody,
  EventParams,
  OrgEvent,
  OrgEventCreateBody,
  OrgEventList,
  OrgEventListQuery,
  OrgEventParams,
  OrgEventUpdateBody,
  OrganizationParams,
  OwnerMeta,
  PlayerEventCreateBody,
  UuidParams,
} from './events.schemas.ts';

const tags = ['events'];
const defaultTags = ['organization default events'];

export default async function eventsRoutes(app: App, { config, services }: Deps) {
  const events = services.events;

  app.post(
    '/v1/events',
    {
      config: { wrap: 'event' },
      schema: { tags, summary: 'Create an event (without chapter_id: an organization default event)', body: EventCreateBody, response: { 201: Event } },
    },
    async (request, reply) => {
      reply.code(201);
      return events.create(request.auth.organizationId, request.body);
    },
  );

  app.get(
    '/v1/events',
    {
      config: { list: 'events' },
      schema: { tags, summary: "The organization's events", querystring: EventListQuery, response: { 200: EventList } },
    },
    async (request) => {
      const { event_type, state } = request.query;
      return answerEnvelope('events', request.query, config.listDefaultCap, (page) => events.list(request.auth.organizationId, { event_type, state }, page));
    },
  );

  app.get(
    '/v1/events/search',
    {
      config: { list: 'events' },
      schema: { tags, summary: 'Search events by text in name, description or html', querystring: EventSearchQuery, response: { 200: EventList } },
    },
    async (request) => {
      const { event_type, state, query } = request.query;
      return answerEnvelope('events', request.query, config.listDefaultCap, (page) =>
        events.list(request.auth.organizationId, { event_type, state, query }, page),
      );
    },
  );

  app.post(
    '/v1/events/:id/duplicate',
    {
      config: { wrap: 'event' },
      // Every attribute is optional here, so a POST without any body is a plain copy.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        tags,
        summary: 'Copy an event (the copy is a draft at the same place unless told otherwise)',
        params: EventParams,
        body: EventDuplicateBody,
        response: { 201: Event },
      },
    },
    async (request, reply) => {
      const copy = await events.duplicate(request.auth.organizationId, request.params.id, request.body);
      reply.code(201);
      return copy;
    },
  );

  const sendEvent = sharedBodySender();
  app.get(
    '/v1/events/:id',
    {
      schema: { tags, summary: 'Get an event', params: EventParams, response: { 200: Event } },
      // Not async: a cached event is answered in the same tick, its body serialized once (docs/performance.md).
    },
    (request, reply) => mapMaybe(events.get(request.auth.organizationId, request.params.id), (event) => sendEvent(reply, event)),
  );

  app.patch(
    '/v1/events/:id',
    {
      config: { wrap: 'event' },
      schema: { tags, summary: 'Update an event', params: EventParams, body: EventUpdateBody, response: { 200: Event } },
    },
    async (request) => events.update(request.auth.organizationId, request.params.id, request.body),
  );

  app.delete(
    '/v1/events/:id',
    {
      schema: { tags, summary: 'Delete an event; answers the deleted event', params: EventParams, response: { 200: Event } },
    },
    async (request) => events.remove(request.auth.organizationId, request.params.id),
  );

  app.get(
    '/v1/events/:id/owner_meta',
    {
      schema: { tags, summary: 'Where the event is shown: chapter, player, video and timing', params: EventParams, response: { 200: OwnerMeta } },
    },
    async (request) => events.ownerMeta(request.auth.organizationId, request.params.id),
  );

  app.get(
    '/v1/players/uuid=:uuid/event_meta',
    {
      schema: {
        tags,
        summary: "The player's events with counts by state and type",
        params: UuidParams,
        querystring: EventMetaQuery,
        response: { 200: EventMeta },
      },
    },
    async (request) => events.playerEventMeta(request.auth.organizationId, { uuid: request.params.uuid }, request.query.include_defaults ?? true),
  );

  app.post(
    '/v1/players/uuid=:uuid/events',
    {
      config: { wrap: 'event' },
      schema: {
        tags,
        summary: 'Add an event to the player (default: its first chapter)',
        params: UuidParams,
        body: PlayerEventCreateBody,
        response: { 201: Event },
      },
    },
    async (request, reply) => {
      const created = await events.addToPlayer(request.auth.organizationId, { uuid: request.params.uuid }, request.body);
      reply.code(201);
      return created;
    },
  );

  // ---- organization default events ----

  app.get(
    '/v1/organizations/:id/events',
    {
      config: { list: 'events' },
      schema: {
        tags: defaultTags,
        summary: "The organization's default events with their timing",
        params: OrganizationParams,
        querystring: OrgEventListQuery,
        response: { 200: OrgEventList },
      },
    },
    async (request) => {
      events.assertOrganization(request.params.id, request.auth.organizationId);
      return events.listDefaults(request.auth.organizationId, pageOf(request.query, config.listDefaultCap));
    },
  );

  app.post(
    '/v1/organizations/:id/events',
    {
      config: { wrap: 'event' },
      schema: {
        tags: defaultTags,
        summary: 'Add a default event (new, or a copy of event_id)',
        params: OrganizationParams,
        body: OrgEventCreateBody,
        response: { 201: OrgEvent },
      },
    },
    async (request, reply) => {
      events.assertOrganization(request.params.id, request.auth.organizationId);
      const created = await events.createDefault(request.auth.organizationId, request.body);
      reply.code(201);
      return created;
    },
  );

  app.patch(
    '/v1/organizations/:id/events/:event_id',
    {
      config: { wrap: 'event' },
      schema: { tags: defaultTags, summary: 'Modify a default event', params: OrgEventParams, body: OrgEventUpdateBody, response: { 200: OrgEvent } },
    },
    async (request) => {
      events.assertOrganization(request.params.id, request.auth.organizationId);
      return events.updateDefault(request.auth.organizationId, request.params.event_id, request.body);
    },
  );

  app.delete(
    '/v1/organizations/:id/events/:event_id',
    {
      schema: { tags: defaultTags, summary: 'Delete a default event; answers it', params: OrgEventParams, response: { 200: OrgEvent } },
    },
    async (request) => {
      events.assertOrganization(request.params.id, request.auth.organizationId);
      return events.removeDefault(request.auth.organizationId, request.params.event_id);
    },
  );
}
