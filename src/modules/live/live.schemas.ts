import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { IdExample, Nullable, Timestamps } from '../../lib/schemas.ts';

/** A string that must be one of `values` (one enum keeps the 422 message readable). */
const OneOf = <T extends string | number>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values], ...options });

export const LIVE_STATES = ['upcoming', 'ongoing', 'finished'] as const;
export type LiveState = (typeof LIVE_STATES)[number];
export const LIVE_ORDER_BY = ['created_at', 'updated_at', 'air_date', 'start_time'] as const;
export type LiveOrderBy = (typeof LIVE_ORDER_BY)[number];
export const SEGMENT_LENGTHS = [1, 4, 10] as const;

/** One tag: a name (`"launch"`) or its parts (`["speaker", "Jane Doe"]`); answered as an array of strings. */
const TagPart = Type.String({ minLength: 1, maxLength: 100 });
export const StreamTags = Type.Array(Type.Union([TagPart, Type.Array(TagPart, { minItems: 1, maxItems: 10 })]), {
  maxItems: 50,
  description: 'Tags: each a string, or an array of strings (the parts of a structured tag, e.g. ["speaker", "Jane Doe"])',
});
export type StreamTagsInput = Static<typeof StreamTags>;

const AirDate = Nullable(Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601 date-time with a time zone' }));

/** Organization 1 and stream instance 1 on a fresh server: what the create example makes. */
export const LiveParams = Type.Object({ current_organization_id: IdExample(1) });
export const LiveInstanceParams = Type.Object({
  current_organization_id: IdExample(1),
  live_stream_instance_id: IdExample(1),
});

export const CreateLiveBody = Type.Object(
  {
    stream_options: Type.Optional(
      Type.Object(
        { recurring: Type.Optional(Type.Boolean({ description: 'The key can start new broadcasts after one ends' })) },
        { additionalProperties: false },
      ),
    ),
    video_options: Type.Object(
      {
        video_name: Type.String({ minLength: 1, maxLength: 255 }),
        description: Type.String({ maxLength: 10_000 }),
        stream_tags: StreamTags,
        air_date: Type.Optional(AirDate),
        segment_length: Type.Optional(OneOf(SEGMENT_LENGTHS, { description: 'HLS segment length in seconds: 1, 4 (default) or 10' })),
        has_redundant_streams: Type.Optional(Type.Boolean({ description: 'Backup ingest credentials (organization feature redundant_streams)' })),
        disable_notifications: Type.Optional(Type.Boolean({ description: "No email to the organization's admins when the stream goes live" })),
        dvr_enabled: Type.Optional(Type.Boolean({ description: 'Viewers can pause and rewind during the broadcast' })),
      },
      { additionalProperties: false },
    ),
  },
  {
    // Stream instance 1 (with its player and video) on a fresh server.
    examples: [
      {
        stream_options: { recurring: true },
        video_options: {
          video_name: 'Weekly town hall',
          description: 'News from the whole company, and your questions answered live',
          stream_tags: ['town-hall', ['speaker', 'Jane Doe']],
          air_date: '2030-01-15T17:00:00Z',
          segment_length: 4,
          dvr_enabled: true,
        },
      },
    ],
  },
);
export type CreateLiveBody = Static<typeof CreateLiveBody>;

export const UpdateLiveBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    dvr_enabled: Type.Optional(Type.Boolean()),
    air_date: Type.Optional(AirDate),
    stream_tags: Type.Optional(StreamTags),
  },
  { examples: [{ name: 'Weekly town hall: Q&A special', air_date: '2030-01-22T17:00:00Z', stream_tags: ['town-hall', 'q-and-a'] }] },
);
export type UpdateLiveBody = Static<typeof UpdateLiveBody>;

export const LiveListQuery = Type.Object({
  ...PagingQuery,
  query: Type.Optional(Type.String({ maxLength: 255, description: 'Part of an instance name or tag (case-insensitive)' })),
  states: Type.Optional(Type.Array(OneOf(LIVE_STATES), { maxItems: 10, description: 'upcoming = unaired, ongoing = live, finished = processing or ready' })),
  order_by: Type.Optional(OneOf(LIVE_ORDER_BY, { description: 'Only with per_page or page' })),
  direction: Type.Optional(OneOf(['asc', 'desc'] as const, { description: 'Only with order_by; default asc' })),
});
export type LiveListQuery = Static<typeof LiveListQuery>;

export const LiveListItem = Type.Object({
  id: Type.Integer(),
  player_id: Nullable(Type.Integer()),
  player_uuid: Type.String(),
  name: Type.String(),
  status: Type.String(),
  recurring: Type.Boolean(),
  air_date: Type.Integer({ description: '0 when no air date' }),
  start_time: Type.Integer({ description: '0 when not started' }),
  vod_created_at: Type.Integer({ description: '0 until the recording is a video' }),
  ...Timestamps,
});
export type LiveListItem = Static<typeof LiveListItem>;

export const LiveList = Type.Object({ summary: Summary, stream_instances: Type.Array(LiveListItem) });

export const StreamDetails = Type.Object({ stream_id: Type.Integer(), recurring: Type.Boolean(), ...Timestamps });

export const InstanceDetails = Type.Object({
  stream_instance_id: Type.Integer(),
  dvr_enabled: Type.Boolean(),
  ingest_url: Type.String({ description: 'rtmp://<host>:<port>/live' }),
  stream_key: Nullable(Type.String({ description: 'null for roles that may not manage live streams' })),
  email: Nullable(Type.String({ description: 'Address of the user whose token created the stream; null for organization tokens' })),
  segment_length: Type.Integer(),
  has_redundant_streams: Type.Boolean(),
  backup_url: Nullable(Type.String({ description: 'rtmp://<host>:<port>/backup; null without redundant streams' })),
  backup_key: Nullable(Type.String()),
  air_date: Type.Integer(),
  start_time: Type.Integer(),
  end_time: Type.Integer(),
  vod_created_at: Type.Integer(),
  ...Timestamps,
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.Array(Type.String()), { description: 'One array per tag: its name, or the parts of a structured tag' }),
  video_id: Nullable(Type.Integer()),
  status: Type.String(),
  player_uuid: Type.String(),
});

export const LiveDetail = Type.Object({ stream_details: StreamDetails, instance_details: InstanceDetails });

const HealthFeed = Nullable(
  Type.Object({
    video_codec_name: Nullable(Type.String()),
    video_width: Nullable(Type.Integer()),
    video_height: Nullable(Type.Integer()),
    video_r_frame_rate: Nullable(Type.Integer()),
    video_bit_rate: Nullable(Type.Integer({ description: 'bits per second' })),
    audio_codec_name: Nullable(Type.String()),
    audio_sample_rate: Nullable(Type.Integer()),
    audio_bit_rate: Nullable(Type.Integer({ description: 'bits per second' })),
    created_at: Type.String({ description: 'ISO 8601 time of the sample' }),
  }),
);

export const LiveHealth = Type.Object({ primary: HealthFeed, backup: HealthFeed });

export const LiveCreated = Type.Object({ stream_instance_id: Type.Integer() });
export const LiveSuccess = Type.Object({ success: Type.Boolean() });
