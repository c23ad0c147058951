import { Type, type Static } from 'typebox';
import { Timestamps, idParams } from '../../lib/schemas.ts';
import { Video, VideoAttributes } from '../videos/videos.schemas.ts';

export const Chapter = Type.Object({
  id: Type.Integer(),
  position: Type.Integer({ description: '0-based, dense within the player' }),
  player_id: Type.Integer(),
  video_id: Type.Integer(),
  video_attributes: Video,
  ...Timestamps,
});
export type Chapter = Static<typeof Chapter>;

/** A chapter's video: an existing one by `video_id`, or a new one from `video_attributes`. */
export const ChapterVideoInput = {
  video_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  video_attributes: Type.Optional(Type.Object(VideoAttributes)),
};

export const NestedChapterInput = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  _destroy: Type.Optional(Type.Boolean()),
  ...ChapterVideoInput,
});
export type NestedChapterInput = Static<typeof NestedChapterInput>;

/** Chapter 2 on a fresh server: the one the create example adds to player 1. */
export const ChapterParams = idParams(2);

export const CreateChapterBody = Type.Object(
  {
    player_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    ...ChapterVideoInput,
  },
  {
    // Chapter 2 and video 2 on a fresh server.
    examples: [
      {
        player_id: 1,
        position: 1,
        video_attributes: { name: 'Customer story', upload_url: 'https://media.example.com/videos/customer-story.mp4' },
      },
    ],
  },
);
export type CreateChapterBody = Static<typeof CreateChapterBody>;

export const UpdateChapterBody = Type.Object(
  {
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    ...ChapterVideoInput,
  },
  { examples: [{ position: 0 }] },
);
export type UpdateChapterBody = Static<typeof UpdateChapterBody>;
