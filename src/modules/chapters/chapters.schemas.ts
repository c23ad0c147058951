import { Type, type Static } from 'typebox';
import { Timestamps } from '../../lib/schemas.ts';
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

export const CreateChapterBody = Type.Object({
  player_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  ...ChapterVideoInput,
});
export type CreateChapterBody = Static<typeof CreateChapterBody>;

export const UpdateChapterBody = Type.Object({
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  ...ChapterVideoInput,
});
export type UpdateChapterBody = Static<typeof UpdateChapterBody>;
