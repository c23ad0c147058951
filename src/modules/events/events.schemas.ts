import { Type, type Static } from 'typebox';
import { IdExample, Nullable, PLAYER_UUID_EXAMPLE } from '../../lib/schemas.ts';
import { PagingQuery, Summary } from '../../lib/schemas.ts';

/** Largest value of a 4-byte integer column (ids, seconds): anything above would overflow PostgreSQL. */
export const INT4_MAX = 2_147_483_647;

/** Every event type the reference knows (reference-notes "Event"). */
export const EVENT_TYPES = [
  'simple_post_roll',
  'simple_overlay',
  'simple_email',
  'fullscreen',
  'annotation',
  'marketo_form',
  'sharing_page_action',
  'vy_free_post_roll',
  'vy_free_on_pause',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_STATES = ['public', 'draft'] as const;
export type EventState = (typeof EVENT_STATES)[number];

/** CTA width bounds (pixels, inclusive); `max_cta_width` of cta_meta. */
export const MIN_CTA_WIDTH = 100;
export const MAX_CTA_WIDTH = 500;

export const EventTypeSchema = Type.Enum([...EVENT_TYPES], { description: 'One of the event types' });
export const EventStateSchema = Type.Enum([...EVENT_STATES], { description: 'public or draft' });

// ---- path parameters -------------------------------------------------------------------------

/** A record id; anything else (text, 0, beyond int4) names no record and answers 404. */
export const IdSchema = Type.Integer({ minimum: 1, maximum: INT4_MAX });
/** Event 3 on a fresh server: the one the create example makes (after CTAs 1 and 2, which share the ids). */
export const EventParams = Type.Object({ id: IdExample(3) });
/** The token's organization: 1 on a fresh server. */
export const OrganizationParams = Type.Object({ id: IdExample(1) });
/** Default event 5 on a fresh server: the one the create example makes. */
export const OrgEventParams = Type.Object({ id: IdExample(1), event_id: IdExample(5) });
/** Player UUIDs (the literal path form `/players/uuid=:uuid`). */
export const UuidParams = Type.Object({ uuid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', examples: [PLAYER_UUID_EXAMPLE] }) });

// ---- placement fields shared by CTAs and events ---------------------------------------------

export const SecondSchema = Type.Integer({ minimum: -1, maximum: INT4_MAX, description: 'Start second; -1 means postroll' });
export const DurationSchema = Type.Integer({ minimum: 0, maximum: INT4_MAX, description: 'Seconds displayed' });
export const WidthSchema = Type.Integer({ minimum: MIN_CTA_WIDTH, maximum: MAX_CTA_WIDTH, description: 'Pixels, 100 to 500 inclusive' });
/** A chapter id in a body: integers only; one that names no chapter of the organization is a 404. */
export const ChapterIdSchema = Type.Integer({ description: 'Chapter the event is placed on; null/absent = organization default event' });

// ---- event bodies ----------------------------------------------------------------------------

const eventFields = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  event_type: Type.Optional(EventTypeSchema),
  html: Type.Optional(Type.String()),
  closeable: Type.Optional(Type.Boolean()),
  fullscreen: Type.Optional(Type.Boolean()),
  background_color: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  annotation_css: Type.Optional(Nullable(Type.String({ maxLength: 100_000 }))),
  blur: Type.Optional(Type.Boolean()),
  state: Type.Optional(EventStateSchema),
  is_new_contact: Type.Optional(Type.Boolean()),
  chapter_id: Type.Optional(Nullable(ChapterIdSchema)),
  second: Type.Optional(SecondSchema),
  duration: Type.Optional(Nullable(DurationSchema)),
  auto_close: Type.Optional(Type.Boolean()),
  width: Type.Optional(Nullable(WidthSchema)),
};

const overlayHtml = '<p>Plans start at $10 a month. <a href="https://www.example.com/pricing">Compare plans</a></p>';

/** POST /v1/events: `event_type` is required, everything else has a default. */
export const EventCreateBody = Type.Object(
  { ...eventFields, event_type: EventTypeSchema },
  // Event 3 on a fresh server.
  { examples: [{ event_type: 'simple_overlay', name: 'Pricing overlay', chapter_id: 1, second: 30, duration: 10, html: overlayHtml }] },
);
export type EventCreateBody = Static<typeof EventCreateBody>;

/** PATCH /v1/events/:id: any subset. */
export const EventUpdateBody = Type.Object(eventFields, { examples: [{ name: 'Pricing overlay (spring offer)', second: 45, duration: 15 }] });
export type EventUpdateBody = Static<typeof EventUpdateBody>;

/** POST /v1/events/:id/duplicate: optional overrides of the copy. */
export const EventDuplicateBody = Type.Object(
  {
    name: eventFields.name,
    state: eventFields.state,
    chapter_id: eventFields.chapter_id,
    second: eventFields.second,
  },
  { examples: [{ name: 'Pricing overlay (copy)', second: 90 }] },
);
export type EventDuplicateBody = Static<typeof EventDuplicateBody>;

/** POST /v1/players/uuid=:uuid/events: chapter_id defaults to the player's first chapter. */
export const PlayerEventCreateBody = Type.Object(
  { ...eventFields, event_type: EventTypeSchema, chapter_id: Type.Optional(ChapterIdSchema) },
  {
    examples: [
      { event_type: 'simple_email', name: 'Newsletter sign-up', second: 60, duration: 20, html: '<p>Get a new tip every week.</p>', is_new_contact: true },
    ],
  },
);
export type PlayerEventCreateBody = Static<typeof PlayerEventCreateBody>;

/** POST /v1/organizations/:id/events: a new default event, or a default copy of `event_id`. */
const { chapter_id: _chapterId, ...defaultEventFields } = eventFields;
export const OrgEventCreateBody = Type.Object(
  { ...defaultEventFields, event_id: Type.Optional(IdSchema) },
  // Event 5 on a fresh server.
  { examples: [{ event_type: 'simple_post_roll', name: 'Subscribe', html: '<p>Liked it? <a href="https://www.example.com/subscribe">Subscribe</a></p>' }] },
);
export type OrgEventCreateBody = Static<typeof OrgEventCreateBody>;
export const OrgEventUpdateBody = Type.Object(defaultEventFields, { examples: [{ name: 'Subscribe to the newsletter', closeable: false }] });
export type OrgEventUpdateBody = Static<typeof OrgEventUpdateBody>;

// ---- queries ---------------------------------------------------------------------------------

export const EventListQuery = Type.Object({
  ...PagingQuery,
  event_type: Type.Optional(Type.Array(EventTypeSchema, { description: 'Only these types' })),
  state: Type.Optional(EventStateSchema),
});
export type EventListQuery = Static<typeof EventListQuery>;

export const EventSearchQuery = Type.Object({
  ...EventListQuery.properties,
  query: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive text found in name, description or html' })),
});
export type EventSearchQuery = Static<typeof EventSearchQuery>;

export const EventMetaQuery = Type.Object({
  include_defaults: Type.Optional(Type.Boolean({ description: 'Also list the organization default events (default true)' })),
});

export const OrgEventListQuery = Type.Object({ ...PagingQuery });

// ---- responses -------------------------------------------------------------------------------

export const Event = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  event_type: Type.String(),
  html: Type.String(),
  closeable: Type.Boolean(),
  fullscreen: Type.Boolean(),
  background_color: Nullable(Type.String()),
  annotation_css: Nullable(Type.String()),
  blur: Type.Boolean(),
  state: Type.String(),
  chapter_id: Nullable(Type.Integer()),
  second: Type.Integer(),
  duration: Nullable(Type.Integer()),
  auto_close: Type.Boolean(),
  width: Nullable(Type.Integer()),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type Event = Static<typeof Event>;

export const EventList = Type.Object({ events: Type.Array(Event), summary: Summary });

export const OwnerMeta = Type.Object({
  event_id: Type.Integer(),
  is_default: Type.Boolean({ description: 'An organization default event, shown on every player (no chapter)' }),
  chapter_id: Nullable(Type.Integer()),
  player_id: Nullable(Type.Integer()),
  player_uuid: Nullable(Type.String()),
  video_id: Nullable(Type.Integer()),
  position: Nullable(Type.Integer()),
  second: Type.Integer(),
  duration: Nullable(Type.Integer()),
});

const countsOf = <const K extends readonly string[]>(keys: K) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])) as { [P in K[number]]: ReturnType<typeof Type.Integer> });

export const EventMeta = Type.Object({
  player_id: Type.Integer(),
  player_uuid: Type.String(),
  max_cta_width: Type.Integer(),
  num_events: Type.Integer(),
  num_public_events: Type.Integer(),
  num_draft_events: Type.Integer(),
  num_default_events: Type.Integer(),
  event_types: countsOf(EVENT_TYPES),
  events: Type.Array(Event),
});

export const OrgEvent = Type.Object({
  event_id: Type.Integer(),
  second: Type.Integer(),
  duration: Nullable(Type.Integer()),
  event: Event,
});
export const OrgEventList = Type.Array(OrgEvent);
