import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { HttpUrl, IdExample, Nullable, PLAYER_UUID_EXAMPLE, Timestamps, idParams } from '../../lib/schemas.ts';

const Int32 = { minimum: 1, maximum: 2147483647 };

/** The reference's thumbnail: {id, uuid, url, created_at, updated_at}. */
export const Thumbnail = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  url: Nullable(
    Type.String({ description: 'Signed, expiring URL of the stored image; for a custom thumbnail not (yet) copied here, the URL it was set with' }),
  ),
  ...Timestamps,
});
export type Thumbnail = Static<typeof Thumbnail>;

export const ThumbnailArray = Type.Array(Thumbnail);
export const ThumbnailList = Type.Union([ThumbnailArray, Type.Object({ thumbnails: ThumbnailArray, summary: Summary })]);

/** The thumbnail as nested in a player's selected thumbnails. */
export const PlayerThumbnailDetail = Type.Object({
  thumbnail_type: Type.Union([Type.Literal('custom'), Type.Literal('generated')]),
  url: Nullable(Type.String()),
  id: Type.Integer(),
  uuid: Type.String(),
  video_id: Type.Integer(),
  millisecond: Nullable(Type.Integer({ description: 'Time in the video the image was taken at (generated thumbnails)' })),
  ...Timestamps,
});

export const PlayerSelectedThumbnail = Type.Object({
  thumbnail: PlayerThumbnailDetail,
  ...Timestamps,
});
export type PlayerSelectedThumbnail = Static<typeof PlayerSelectedThumbnail>;
export const PlayerSelectedThumbnails = Type.Array(PlayerSelectedThumbnail);

/** Video 1, player 1 and thumbnail 1 on a fresh server: what the create examples (and the video's PATCH) make. */
export const VideoParams = Type.Object({ video_id: IdExample(1) });
export const ThumbnailParams = idParams(1);
export const PlayerIdParams = Type.Object({ player_id: IdExample(1) });
export const PlayerUuidParams = Type.Object({ uuid: Type.String({ minLength: 1, maxLength: 64, examples: [PLAYER_UUID_EXAMPLE] }) });
/** `/v1.1/players/uuid=:player_uuid/…`: a UUID. */
export const PlayerUuidOnlyParams = Type.Object({ player_uuid: Type.String({ minLength: 1, maxLength: 64, examples: [PLAYER_UUID_EXAMPLE] }) });
/** `/v1.1/players/:player_uuid/…`: a UUID, or (as everywhere else) a numeric id. */
export const PlayerUuidOrIdParams = Type.Object({ player_uuid: Type.String({ minLength: 1, maxLength: 64, examples: ['1'] }) });

export const ThumbnailListQuery = Type.Object({ ...PagingQuery });

/** PATCH /v1/videos/:video_id/selected_thumbnail: one of the ways to name the new selection. */
export const SelectVideoThumbnailBody = Type.Object(
  {
    thumbnail_id: Type.Optional(Type.Integer(Int32)),
    thumbnail_url: Type.Optional(HttpUrl),
    /** The reference's creation form; the first URL is used. */
    thumbnails: Type.Optional(Type.Array(Type.Object({ url: HttpUrl }), { minItems: 1, maxItems: 1 })),
  },
  // Thumbnail 1 on a fresh server.
  { examples: [{ thumbnail_url: 'https://media.example.com/images/welcome-poster.jpg' }] },
);
export type SelectVideoThumbnailBody = Static<typeof SelectVideoThumbnailBody>;

export const PlayerThumbnailItem = Type.Object({
  thumbnail_id: Type.Optional(Type.Integer(Int32)),
  thumbnail_url: Type.Optional(HttpUrl),
  /** For a thumbnail_url: the video it is for; default the video of the chapter at the item's index. */
  video_id: Type.Optional(Type.Integer(Int32)),
});
export type PlayerThumbnailItem = Static<typeof PlayerThumbnailItem>;

/**
 * The list of new selections. Sent as a bare JSON array, or as `{"thumbnails": [...]}` /
 * `{"selected_thumbnails": [...]}` (where auth_token may sit beside it); the route normalises the
 * other forms into this one before validation.
 */
export const SetPlayerThumbnailsBody = Type.Object(
  {
    thumbnails: Type.Array(PlayerThumbnailItem, { minItems: 1, maxItems: 200 }),
  },
  { examples: [{ thumbnails: [{ thumbnail_url: 'https://media.example.com/images/product-tour-poster.jpg' }] }] },
);
export type SetPlayerThumbnailsBody = Static<typeof SetPlayerThumbnailsBody>;
