import { Type, type Static } from 'typebox';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { HttpUrl, Nullable, Timestamps, idParams } from '../../lib/schemas.ts';
import { Chapter, NestedChapterInput } from '../chapters/chapters.schemas.ts';

export const Player = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  name: Type.String(),
  status: Nullable(Type.String()),
  access_code: Nullable(Type.String()),
  autoplay: Type.Boolean(),
  sharing_page_comments: Type.Boolean(),
  sharing_page: Type.Boolean(),
  default_hd: Type.Boolean(),
  splash_screen_fade: Type.Boolean(),
  mute_onload: Type.Boolean(),
  height: Type.Integer(),
  width: Type.Integer(),
  playlist_always_open: Type.Boolean(),
  release_date: Type.Integer(),
  expiry_date: Nullable(Type.Integer()),
  redirect_url: Nullable(Type.String()),
  redirect_whole_page: Type.Boolean(),
  color: Type.String({ description: 'hex colour without a leading hash' }),
  play_button: Type.Boolean(),
  viral_sharing: Type.Boolean(),
  whitelisted_embed_domains: Type.Array(Type.String()),
  embed_button: Type.Boolean(),
  description: Nullable(Type.String()),
  viral_sharing_message: Nullable(Type.String()),
  custom_sharing_link: Nullable(Type.String()),
  playlist_color: Nullable(Type.String()),
  on_complete: Nullable(Type.String()),
  player_type: Type.String(),
  chapters_attributes: Type.Array(Chapter),
  ...Timestamps,
});
export type Player = Static<typeof Player>;

/** Unix seconds up to the end of year 9999. */
const MAX_SECONDS = 253_402_300_799;

const Hex = Type.String({ pattern: '^#?[0-9a-fA-F]{6}$' });

/** Settings a client may write on create and update. */
export const PlayerSettings = {
  access_code: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  autoplay: Type.Optional(Type.Boolean()),
  sharing_page_comments: Type.Optional(Type.Boolean()),
  sharing_page: Type.Optional(Type.Boolean()),
  default_hd: Type.Optional(Type.Boolean()),
  splash_screen_fade: Type.Optional(Type.Boolean()),
  mute_onload: Type.Optional(Type.Boolean()),
  height: Type.Optional(Type.Integer({ minimum: 1, maximum: 4320 })),
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: 7680 })),
  playlist_always_open: Type.Optional(Type.Boolean()),
  release_date: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SECONDS })),
  expiry_date: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: MAX_SECONDS }))),
  redirect_url: Type.Optional(Nullable(HttpUrl)),
  redirect_whole_page: Type.Optional(Type.Boolean()),
  color: Type.Optional(Hex),
  play_button: Type.Optional(Type.Boolean()),
  viral_sharing: Type.Optional(Type.Boolean()),
  whitelisted_embed_domains: Type.Optional(
    Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }), Type.String({ maxLength: 10_000 })]),
  ),
  embed_button: Type.Optional(Type.Boolean()),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  viral_sharing_message: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  custom_sharing_link: Type.Optional(Nullable(HttpUrl)),
  playlist_color: Type.Optional(Nullable(Hex)),
  on_complete: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
};

/** Player 1 on a fresh server: the one the create example makes. */
export const PlayerParams = idParams(1);

export const CreatePlayerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    chapters_attributes: Type.Optional(Type.Array(NestedChapterInput, { maxItems: 200 })),
    ...PlayerSettings,
  },
  {
    // Player 1 with chapter 1 and video 1 on a fresh server.
    examples: [
      {
        name: 'Product tour',
        description: 'A two-minute walk through the product',
        chapters_attributes: [{ position: 0, video_attributes: { name: 'Welcome', upload_url: 'https://media.example.com/videos/welcome.mp4' } }],
      },
    ],
  },
);
export type CreatePlayerBody = Static<typeof CreatePlayerBody>;

export const UpdatePlayerBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    chapters_attributes: Type.Optional(Type.Array(NestedChapterInput, { maxItems: 200 })),
    ...PlayerSettings,
  },
  { examples: [{ name: 'Product tour (2025)', autoplay: true, color: '1a73e8' }] },
);
export type UpdatePlayerBody = Static<typeof UpdatePlayerBody>;

export const PlayerListQuery = Type.Object({
  ...PagingQuery,
  query: Type.Optional(Type.String({ maxLength: 255, description: 'Prefix of the player name' })),
});

export const PlayerList = Type.Union([Type.Array(Player), Type.Object({ players: Type.Array(Player), summary: Summary })]);
