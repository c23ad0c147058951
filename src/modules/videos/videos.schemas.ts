import { Type, type Static } from 'typebox';
import { PagingQuery } from '../../lib/schemas.ts';
import { HttpUrl, Nullable, Timestamps, idParams } from '../../lib/schemas.ts';

export const Video = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  name: Type.String(),
  upload_url: Nullable(Type.String()),
  description: Nullable(Type.String()),
  sync: Type.Boolean(),
  audio_gain: Type.Integer(),
  webhook_url: Nullable(Type.String()),
  status: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  seconds: Nullable(Type.Integer()),
  origin: Nullable(Type.String()),
  ...Timestamps,
});
export type Video = Static<typeof Video>;

/** Writable video attributes, shared by video creation and nested player/chapter creation. */
export const VideoAttributes = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  upload_url: HttpUrl,
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  sync: Type.Optional(Type.Boolean()),
  audio_gain: Type.Optional(Type.Integer({ minimum: -100, maximum: 100 })),
  webhook_url: Type.Optional(Nullable(HttpUrl)),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
};

/** Video 1 on a fresh server: the one the players create example makes. */
export const VideoParams = idParams(1);

export const CreateVideoBody = Type.Object(VideoAttributes, {
  // Video 3 (and its facade player, 2) on a fresh server.
  examples: [
    {
      name: 'Feature walkthrough',
      upload_url: 'https://media.example.com/videos/feature-walkthrough.mp4',
      description: 'The new dashboard, screen by screen',
    },
  ],
});
export type CreateVideoBody = Static<typeof CreateVideoBody>;

export const UpdateVideoBody = Type.Partial(Type.Object(VideoAttributes), {
  examples: [{ name: 'Welcome to Reelbase', description: 'Start here: what Reelbase does in two minutes', audio_gain: 3 }],
});
export type UpdateVideoBody = Static<typeof UpdateVideoBody>;

/** The statuses a list can be filtered by (a video queued for processing has status null). */
export const VideoStatuses = ['waiting_for_upload', 'processing', 'ready', 'error'] as const;
export type VideoStatus = (typeof VideoStatuses)[number];

export const VideoListQuery = Type.Object({
  ...PagingQuery,
  query: Type.Optional(Type.String({ maxLength: 255, description: 'Prefix of the video name' })),
  status: Type.Optional(
    Type.Union(
      VideoStatuses.map((s) => Type.Literal(s)),
      {
        description:
          'Only the videos in this status; processing includes those queued for it (status null). Not in the spec: an addition for the web dashboard',
      },
    ),
  ),
});

export const VideoFiles = Type.Object({
  id: Type.Integer(),
  urls: Type.Object({
    sd: Nullable(Type.String()),
    hd: Nullable(Type.String()),
    hls: Nullable(Type.String({ description: 'The HLS master playlist of the adaptive ladder (null for a custom file set)' })),
  }),
});

export const VideoFilesQuery = Type.Object({
  custom_identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

/** POST /v1/videos/:id/files: registers an alternative file set fetched from the given URLs. */
export const RegisterFileSetBody = Type.Object(
  {
    custom_identifier: Type.String({ minLength: 1, maxLength: 255 }),
    sd_url: Type.Optional(HttpUrl),
    hd_url: Type.Optional(HttpUrl),
  },
  {
    examples: [
      {
        custom_identifier: 'mobile',
        sd_url: 'https://media.example.com/videos/welcome-mobile-480p.mp4',
        hd_url: 'https://media.example.com/videos/welcome-mobile-720p.mp4',
      },
    ],
  },
);
export type RegisterFileSetBody = Static<typeof RegisterFileSetBody>;

export const VideoFileSet = Type.Object({
  id: Type.Integer({ description: 'video id' }),
  custom_identifier: Type.String(),
  sd_url: Nullable(Type.String({ description: 'source of the sd rendition' })),
  hd_url: Nullable(Type.String({ description: 'source of the hd rendition' })),
  status: Type.String({ description: 'processing, ready or error' }),
  error_message: Nullable(Type.String()),
  ...Timestamps,
});
export type VideoFileSet = Static<typeof VideoFileSet>;

export const DeleteFileSetQuery = Type.Object({
  custom_identifier: Type.String({ minLength: 1, maxLength: 255, examples: ['mobile'] }),
});
