import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, unique, type OrgContext } from './helpers/factories.ts';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { LocalFileStore } from '../src/media/file-store.ts';
import { MAX_CAPTIONS_PER_VIDEO } from '../src/modules/captions/captions.service.ts';

const P = '/dashboard/v1';

const CAPTION_KEYS = [
  'id',
  'video_id',
  'language',
  'status',
  'is_default',
  'notes',
  'srt_url',
  'vtt_url',
  'txt_url',
  'srt_download_url',
  'vtt_download_url',
  'txt_download_url',
  'formatted_text',
  'plain_text',
  'formatted_language_name',
  'localized_language_name',
  'created_at',
  'updated_at',
].sort();

const SRT = '1\r\n00:00:01,000 --> 00:00:04,500\r\nHello, <i>world</i>.\r\n\r\n2\r\n01:00:05,250 --> 01:00:07,000\r\nTwo\r\nlines\r\n';
const SRT_AS_VTT = 'WEBVTT\n\n1\n00:00:01.000 --> 00:00:04.500\nHello, <i>world</i>.\n\n2\n01:00:05.250 --> 01:00:07.000\nTwo\nlines\n';
const VTT = '\uFEFFWEBVTT\n\nNOTE comment\n\nintro\n00:01.000 --> 00:02.000 align:start\n<v Ann>Bonjour</v>\n';
const BROKEN_SRT = '1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:03,000 -> 00:00:04,000\nB\n';

/** Path and query of an absolute URL the app answers (signed caption URLs). */
const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

describe.each(dialects)('captions on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let server: http.Server;
  let base: string;
  const served: string[] = [];
  let flakyCalls = 0;

  const files: Record<string, { status?: number; body?: string | Buffer; type?: string }> = {
    '/captions.srt': { body: SRT, type: 'application/x-subrip' },
    '/captions.vtt': { body: VTT, type: 'text/vtt' },
    '/broken.vtt': { body: 'WEBVTT\n\n00:01.000 --> 00:02.000\nA\n\nid\n00:03.000 --> 00:0x.000\nB\n', type: 'text/vtt' },
    '/latin1.srt': { body: Buffer.from([...Buffer.from('1\n00:00:01,000 --> 00:00:02,000\nCaf'), 0xe9, 0x0a]), type: 'text/plain' },
    '/missing.srt': { status: 404, body: 'not here' },
  };

  const drain = () =>
    new JobRunner(t.database.db, {
      handlers: { ['caption.fetch']: jobHandlers(createContainer({ config: t.config, database: t.database }))['caption.fetch'] },
      backoff: () => 0,
    }).drain();

  async function newVideo(api = org.api) {
    const res = await api.post(`${P}/videos`, { name: unique('Video'), upload_url: 'https://media.example.com/v.mp4' });
    expect(res.status).toBe(201);
    return res.body.id as number;
  }

  async function addCaption(videoId: number, body: Record<string, unknown>, api = org.api) {
    const res = await api.post(`${P}/videos/${videoId}/captions`, body);
    expect(res.status, res.raw).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url === '/flaky.srt') {
        flakyCalls++;
        res.writeHead(503).end('busy');
        return;
      }
      const file = files[req.url ?? ''];
      if (!file) return void res.writeHead(404).end();
      res.writeHead(file.status ?? 200, { 'content-type': file.type ?? 'text/plain' }).end(file.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${port}` });
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  describe('adding a file in the body', () => {
    it('stores SRT as WebVTT with the full caption shape (.json path, wrapped body)', async () => {
      const videoId = await newVideo();
      const before = Math.floor(Date.now() / 1000);
      const res = await client(t.app).post(`${P}/videos/${videoId}/captions.json`, {
        auth_token: org.token,
        caption: { language: 'en-us', content: SRT, notes: 'from the editor' },
      });
      expect(res.status).toBe(201);
      const c = res.body;
      expect(Object.keys(c).sort()).toEqual(CAPTION_KEYS);
      expect(c).toMatchObject({
        video_id: videoId,
        language: 'en-US',
        status: 'complete',
        is_default: false,
        notes: 'from the editor',
        formatted_text: 'Hello, <i>world</i>.\n\nTwo\nlines',
        plain_text: 'Hello, world.\nTwo lines',
        formatted_language_name: 'English (United States)',
        localized_language_name: 'English (United States)',
      });
      expect(typeof c.id).toBe('number');
      expect(c.created_at).toBeGreaterThanOrEqual(before);
      expect(Number.isInteger(c.updated_at)).toBe(true);
      for (const key of ['srt_url', 'vtt_url', 'txt_url', 'srt_download_url', 'vtt_download_url', 'txt_download_url']) {
        expect(c[key], key).toMatch(/^http:\/\/reelbase\.test\/dashboard\/v1\/captions\/\d+\/files\/en-US\.(srt|vtt|txt)\?expires=\d+&signature=[\w-]+/);
      }
      const content = await org.api.get(`${P}/captions/${c.id}/content`);
      expect(content.status).toBe(200);
      expect(content.headers['content-type']).toBe('text/vtt; charset=utf-8');
      expect(content.raw).toBe(SRT_AS_VTT);
    });

    it('takes WebVTT (detected by its signature), keeping identifiers and settings, and names the language', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'fr_ca', content: VTT });
      expect(c).toMatchObject({
        language: 'fr-CA',
        status: 'complete',
        plain_text: 'Bonjour',
        formatted_language_name: 'French (Canada)',
        localized_language_name: 'Français (Canada)',
      });
      const content = await org.api.get(`${P}/captions/${c.id}/content`);
      expect(content.raw).toBe('WEBVTT\n\nintro\n00:00:01.000 --> 00:00:02.000 align:start\n<v Ann>Bonjour</v>\n');
    });

    it('a malformed file makes an error caption whose content status names the failing line', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: BROKEN_SRT });
      expect(c.status).toBe('error');
      for (const key of ['srt_url', 'vtt_url', 'txt_url', 'srt_download_url', 'vtt_download_url', 'txt_download_url', 'formatted_text', 'plain_text']) {
        expect(c[key], key).toBeNull();
      }
      const status = await org.api.get(`${P}/captions/${c.id}/content/status`);
      expect(status.status).toBe(200);
      expect(status.body).toEqual({
        id: c.id,
        video_id: videoId,
        status: 'error',
        content_status: 'error',
        error_message: expect.stringMatching(/^The SRT file is malformed: line 6: expected a cue timing line/),
        error_line: 6,
        cue_count: 0,
        updated_at: c.updated_at,
      });
      const content = await org.api.get(`${P}/captions/${c.id}/content`);
      expect(content.status).toBe(409);
      expect(content.body.code).toBe('conflict');
      expect(content.body.error).toMatch(/line 6/);
    });

    it('a forced format is used as given: VTT text declared SRT fails at line 2', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: 'WEBVTT\n00:01.000 --> 00:02.000\nA\n', format: 'vtt' });
      expect(c.status).toBe('error');
      const status = await org.api.get(`${P}/captions/${c.id}/content/status`);
      expect(status.body.error_line).toBe(2);
      expect(status.body.error_message).toMatch(/^The WebVTT file is malformed: line 2: a cue must be separated from the WEBVTT header/);
      const srt = await addCaption(videoId, { language: 'en', content: 'WEBVTT\n\n00:01.000 --> 00:02.000\nA\n', format: 'srt' });
      expect(srt.status).toBe('error');
      expect((await org.api.get(`${P}/captions/${srt.id}/content/status`)).body.error_line).toBe(2);
    });
  });

  describe('files and signed URLs', () => {
    let caption: any;
    beforeAll(async () => {
      caption = await addCaption(await newVideo(), { language: 'de', content: SRT });
    });

    it('converts the content to srt and txt, and serves attachments on request', async () => {
      const srt = await org.api.get(`${P}/captions/${caption.id}/content?format=srt`);
      expect(srt.headers['content-type']).toBe('application/x-subrip; charset=utf-8');
      expect(srt.raw).toBe('1\n00:00:01,000 --> 00:00:04,500\nHello, <i>world</i>.\n\n2\n01:00:05,250 --> 01:00:07,000\nTwo\nlines\n');
      const txt = await org.api.get(`${P}/captions/${caption.id}/content?format=txt&download=true`);
      expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(txt.headers['content-disposition']).toBe(`attachment; filename="caption-${caption.id}-de.txt"`);
      expect(txt.raw).toBe('Hello, world.\nTwo lines\n');
      expect((await org.api.get(`${P}/captions/${caption.id}/content?format=docx`)).status).toBe(422);
      expect((await org.api.get(`${P}/captions/${caption.id}/content`, { accept: '*/*' })).status).toBe(200);
      const byAccept = await org.api.get(`${P}/captions/${caption.id}/content`, { accept: 'application/x-subrip' });
      expect(byAccept.status).toBe(200);
      expect(byAccept.raw).toMatch(/^1\n00:00:01,000 --> /);
      const vttAccept = await org.api.get(`${P}/captions/${caption.id}/content`, { accept: 'text/vtt' });
      expect(vttAccept.status).toBe(200);
      expect(vttAccept.headers['content-type']).toBe('text/vtt; charset=utf-8');
    });

    it('the *_url fields work without a token; *_download_url as attachments', async () => {
      const anonymous = client(t.app);
      const vtt = await anonymous.get(local(caption.vtt_url));
      expect(vtt.status).toBe(200);
      expect(vtt.headers['content-type']).toBe('text/vtt; charset=utf-8');
      expect(vtt.headers['content-disposition']).toBeUndefined();
      expect(vtt.raw).toBe(SRT_AS_VTT);
      const srt = await anonymous.get(local(caption.srt_download_url));
      expect(srt.status).toBe(200);
      expect(srt.headers['content-disposition']).toBe(`attachment; filename="caption-${caption.id}-de.srt"`);
      expect(srt.raw).toMatch(/^1\n00:00:01,000 --> 00:00:04,500\n/);
      const txt = await anonymous.get(local(caption.txt_url));
      expect(txt.raw).toBe('Hello, world.\nTwo lines\n');
    });

    it('refuses a wrong, missing or expired signature with 403, and another file with the same signature', async () => {
      const anonymous = client(t.app);
      const url = new URL(caption.vtt_url);
      const tampered = `${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${'A'.repeat(43)}`;
      const r1 = await anonymous.get(tampered);
      expect(r1.status).toBe(403);
      expect(r1.body.code).toBe('forbidden');
      expect((await anonymous.get(url.pathname)).status).toBe(403);
      const later = `${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 1}&signature=${url.searchParams.get('signature')}`;
      expect((await anonymous.get(later)).status).toBe(403);
      const expired = `${url.pathname}?expires=1000&signature=${url.searchParams.get('signature')}`;
      expect((await anonymous.get(expired)).status).toBe(403);
      const otherFile = `${url.pathname.replace(/\.vtt$/, '.srt')}${url.search}`;
      expect((await anonymous.get(otherFile)).status).toBe(403);
      expect((await anonymous.get(`${url.pathname.replace(/de\.vtt$/, '..%2F.vtt')}${url.search}`)).status).toBe(404);
    });
  });

  describe('fetching srt_url / vtt_url in a job', () => {
    it('starts in_progress, then completes; SRT wins when both URLs are given', async () => {
      const videoId = await newVideo();
      served.length = 0;
      const c = await addCaption(videoId, { language: 'en', srt_url: `${base}/captions.srt`, vtt_url: `${base}/captions.vtt` });
      expect(c.status).toBe('in_progress');
      expect(c.vtt_url).toBeNull();
      expect(c.plain_text).toBeNull();
      const pending = await org.api.get(`${P}/captions/${c.id}/content/status`);
      expect(pending.body).toMatchObject({ status: 'in_progress', content_status: 'in_progress', error_message: null, error_line: null });
      expect((await org.api.get(`${P}/captions/${c.id}/content`)).status).toBe(409);
      await drain();
      expect(served).toEqual(['/captions.srt']);
      const done = await org.api.get(`${P}/captions/${c.id}`);
      expect(done.body.status).toBe('complete');
      expect(done.body.plain_text).toBe('Hello, world.\nTwo lines');
      expect((await org.api.get(`${P}/captions/${c.id}/content`)).raw).toBe(SRT_AS_VTT);
      expect((await org.api.get(`${P}/captions/${c.id}/content/status`)).body).toMatchObject({ content_status: 'complete', cue_count: 2 });
    });

    it('fetches vtt_url and decodes a Windows-1252 file', async () => {
      const videoId = await newVideo();
      const a = await addCaption(videoId, { language: 'fr', vtt_url: `${base}/captions.vtt` });
      const b = await addCaption(videoId, { language: 'fr', srt_url: `${base}/latin1.srt` });
      await drain();
      expect((await org.api.get(`${P}/captions/${a.id}`)).body).toMatchObject({ status: 'complete', plain_text: 'Bonjour' });
      expect((await org.api.get(`${P}/captions/${b.id}`)).body).toMatchObject({ status: 'complete', plain_text: 'Café' });
    });

    it('a malformed fetched file is an error naming the line', async () => {
      const c = await addCaption(await newVideo(), { language: 'en', vtt_url: `${base}/broken.vtt` });
      await drain();
      const status = await org.api.get(`${P}/captions/${c.id}/content/status`);
      expect(status.body.status).toBe('error');
      expect(status.body.error_line).toBe(7);
      expect(status.body.error_message).toMatch(/line 7: malformed cue timing "00:03\.000 --> 00:0x\.000"/);
    });

    it('a 404, a refused address and a server that keeps failing end in error, never a 5xx', async () => {
      const videoId = await newVideo();
      const missing = await addCaption(videoId, { language: 'en', srt_url: `${base}/missing.srt` });
      const refused = await addCaption(videoId, { language: 'en', srt_url: 'http://127.0.0.2:9/private.srt' });
      flakyCalls = 0;
      const flaky = await addCaption(videoId, { language: 'en', srt_url: `${base}/flaky.srt` });
      await drain();
      const s1 = (await org.api.get(`${P}/captions/${missing.id}/content/status`)).body;
      expect(s1.status).toBe('error');
      expect(s1.error_message).toMatch(/could not be fetched from .*missing\.srt: .*HTTP 404/);
      const s2 = (await org.api.get(`${P}/captions/${refused.id}/content/status`)).body;
      expect(s2.status).toBe('error');
      expect(s2.error_message).toMatch(/UPLOAD_ALLOWED_HOSTS/);
      const s3 = (await org.api.get(`${P}/captions/${flaky.id}/content/status`)).body;
      expect(s3.status).toBe('error');
      expect(s3.error_message).toMatch(/HTTP 503/);
      expect(flakyCalls).toBe(5);
    });

    it('a job for a replaced source changes nothing', async () => {
      const c = await addCaption(await newVideo(), { language: 'en', vtt_url: `${base}/captions.vtt` });
      const replaced = await org.api.patch(`${P}/captions/${c.id}`, { content: SRT });
      expect(replaced.body.status).toBe('complete');
      await drain();
      const after = await org.api.get(`${P}/captions/${c.id}`);
      expect(after.body.plain_text).toBe('Hello, world.\nTwo lines');
      expect(after.body.updated_at).toBe(replaced.body.updated_at);
    });
  });

  describe('validation and access', () => {
    let videoId: number;
    beforeAll(async () => {
      videoId = await newVideo();
    });

    it('answers 422 naming the field for bad input', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ content: SRT }, 'language'],
        [{ language: 'xx', content: SRT }, 'language'],
        [{ language: 'english', content: SRT }, 'language'],
        [{ language: 'en' }, 'content'],
        [{ language: 'en', content: '' }, 'content'],
        [{ language: 'en', content: SRT, srt_url: `${base}/captions.srt` }, 'content'],
        [{ language: 'en', srt_url: 'ftp://example.com/a.srt' }, 'srt_url'],
        [{ language: 'en', vtt_url: 'not a url' }, 'vtt_url'],
        [{ language: 'en', content: SRT, format: 'ass' }, 'format'],
        [{ language: 'en', content: SRT, is_default: 'yes' }, 'is_default'],
        [{ language: 'en', content: 42 }, 'content'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.post(`${P}/videos/${videoId}/captions`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(
          res.body.details.map((d: any) => d.field),
          JSON.stringify(body),
        ).toContain(field);
      }
    });

    it('answers 400 for malformed JSON and 415 for another media type', async () => {
      expect((await org.api.post(`${P}/videos/${videoId}/captions`, '{"language": ')).status).toBe(400);
      const res = await org.api.request('POST', `${P}/videos/${videoId}/captions`, SRT, { 'content-type': 'text/plain' });
      expect(res.status).toBe(415);
    });

    it('answers 401 without a token and 403 for a viewer writing', async () => {
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      const anonymous = client(t.app);
      expect((await anonymous.get(`${P}/videos/${videoId}/captions`)).status).toBe(401);
      expect((await anonymous.get(`${P}/captions/${c.id}/content`)).status).toBe(401);
      const viewer = await org.as('viewer');
      expect((await viewer.get(`${P}/captions/${c.id}`)).status).toBe(200);
      expect((await viewer.get(`${P}/captions/${c.id}/content`)).status).toBe(200);
      for (const res of [
        await viewer.post(`${P}/videos/${videoId}/captions`, { language: 'en', content: SRT }),
        await viewer.patch(`${P}/captions/${c.id}`, { notes: 'x' }),
        await viewer.patch(`${P}/captions/${c.id}/publish`),
        await viewer.patch(`${P}/captions/${c.id}/draft`),
        await viewer.delete(`${P}/captions/${c.id}`),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
      const editor = await org.as('editor');
      expect((await editor.patch(`${P}/captions/${c.id}/publish`)).status).toBe(200);
    });

    it("answers 404 for a missing video or caption and for another organization's", async () => {
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      const theirVideo = await newVideo(other.api);
      const theirs = await addCaption(theirVideo, { language: 'en', content: SRT }, other.api);
      const misses = [
        await org.api.get(`${P}/videos/999999/captions`),
        await org.api.get(`${P}/videos/abc/captions`),
        await org.api.get(`${P}/videos/${theirVideo}/captions`),
        await org.api.post(`${P}/videos/${theirVideo}/captions`, { language: 'en', content: SRT }),
        await org.api.get(`${P}/captions/${theirs.id}`),
        await org.api.patch(`${P}/captions/${theirs.id}`, { notes: 'mine' }),
        await org.api.delete(`${P}/captions/${theirs.id}`),
        await org.api.get(`${P}/captions/${theirs.id}/content`),
        await org.api.get(`${P}/captions/${theirs.id}/content/status`),
        await org.api.patch(`${P}/captions/${theirs.id}/draft`),
        await org.api.patch(`${P}/captions/${theirs.id}/publish`),
        await other.api.get(`${P}/captions/${c.id}`),
        await org.api.get(`${P}/captions/0`),
        await org.api.get(`${P}/captions/x1`),
      ];
      for (const res of misses) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      expect((await other.api.get(`${P}/captions/${theirs.id}`)).body.notes).toBeNull();
    });
  });

  describe('status transitions', () => {
    it('publishes from complete or draft only, with the reference error otherwise', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      const published = await org.api.patch(`${P}/captions/${c.id}/publish`);
      expect(published.status).toBe(200);
      expect(Object.keys(published.body).sort()).toEqual(CAPTION_KEYS);
      expect(published.body.status).toBe('published');
      const again = await org.api.patch(`${P}/captions/${c.id}/publish`);
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ error: "Caption must be set to 'draft', or 'complete' to set it to 'published'", code: 'bad_request', details: [] });
      const draft = await org.api.patch(`${P}/captions/${c.id}/draft`);
      expect(draft.status).toBe(200);
      expect(draft.body.status).toBe('draft');
      expect((await org.api.patch(`${P}/captions/${c.id}/draft`)).body.status).toBe('draft');
      expect((await org.api.patch(`${P}/captions/${c.id}/publish.json`)).body.status).toBe('published');
      const status = await org.api.get(`${P}/captions/${c.id}/content/status`);
      expect(status.body).toMatchObject({ status: 'published', content_status: 'complete' });
    });

    it('an error or in_progress caption can be neither published nor set to draft', async () => {
      const videoId = await newVideo();
      const broken = await addCaption(videoId, { language: 'en', content: BROKEN_SRT });
      const pending = await addCaption(videoId, { language: 'en', srt_url: `${base}/captions.srt` });
      for (const c of [broken, pending]) {
        const pub = await org.api.patch(`${P}/captions/${c.id}/publish`);
        expect(pub.status).toBe(400);
        expect(pub.body).toEqual({ error: "Caption must be set to 'draft', or 'complete' to set it to 'published'", code: 'bad_request', details: [] });
        const draft = await org.api.patch(`${P}/captions/${c.id}/draft`);
        expect(draft.status).toBe(400);
        expect(draft.body.code).toBe('bad_request');
      }
      await drain();
      expect((await org.api.patch(`${P}/captions/${pending.id}/publish`)).status).toBe(200);
    });

    it('a new file sends a published caption back through processing', async () => {
      const c = await addCaption(await newVideo(), { language: 'en', content: SRT });
      await org.api.patch(`${P}/captions/${c.id}/publish`);
      const res = await org.api.patch(`${P}/captions/${c.id}`, { content: VTT });
      expect(res.body).toMatchObject({ status: 'complete', plain_text: 'Bonjour' });
      const broken = await org.api.patch(`${P}/captions/${c.id}`, { caption: { content: BROKEN_SRT } });
      expect(broken.status).toBe(200);
      expect(broken.body.status).toBe('error');
      expect(broken.body.vtt_url).toBeNull();
      const viaUrl = await org.api.patch(`${P}/captions/${c.id}`, { vtt_url: `${base}/captions.vtt` });
      expect(viaUrl.body.status).toBe('in_progress');
      await drain();
      expect((await org.api.get(`${P}/captions/${c.id}`)).body.status).toBe('complete');
    });
  });

  describe('update, default, delete', () => {
    it('updates language, notes and is_default; an empty update changes nothing', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: SRT, notes: 'n' });
      const res = await org.api.patch(`${P}/captions/${c.id}`, { language: 'pt-br', notes: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        language: 'pt-BR',
        notes: null,
        formatted_language_name: 'Portuguese (Brazil)',
        localized_language_name: 'Português (Brasil)',
        status: 'complete',
      });
      expect(res.body.vtt_url).toMatch(/\/files\/pt-BR\.vtt\?/);
      const put = await org.api.put(`${P}/captions/${c.id}`, { notes: 'via put' });
      expect(put.body.notes).toBe('via put');
      const same = await org.api.patch(`${P}/captions/${c.id}`, {});
      expect(same.status).toBe(200);
      expect(same.body.updated_at).toBe(put.body.updated_at);
      for (const [body, field] of [
        [{ language: 'zz' }, 'language'],
        [{ format: 'srt' }, 'format'],
        [{ content: SRT, vtt_url: `${base}/a.vtt` }, 'content'],
        [{ notes: 5 }, 'notes'],
      ] as const) {
        const bad = await org.api.patch(`${P}/captions/${c.id}`, body);
        expect(bad.status).toBe(422);
        expect(bad.body.details[0].field).toBe(field);
      }
    });

    it('keeps one default caption per video', async () => {
      const videoId = await newVideo();
      const otherVideo = await newVideo();
      const a = await addCaption(videoId, { language: 'en', content: SRT, is_default: true });
      const elsewhere = await addCaption(otherVideo, { language: 'en', content: SRT, is_default: true });
      const b = await addCaption(videoId, { language: 'fr', content: SRT, is_default: true });
      expect(b.is_default).toBe(true);
      const list = async () => (await org.api.get(`${P}/videos/${videoId}/captions`)).body.map((c: any) => [c.id, c.is_default]);
      expect(await list()).toEqual([
        [a.id, false],
        [b.id, true],
      ]);
      await org.api.patch(`${P}/captions/${a.id}`, { is_default: true });
      expect(await list()).toEqual([
        [a.id, true],
        [b.id, false],
      ]);
      await org.api.patch(`${P}/captions/${a.id}`, { is_default: false });
      expect(await list()).toEqual([
        [a.id, false],
        [b.id, false],
      ]);
      expect((await org.api.get(`${P}/captions/${elsewhere.id}`)).body.is_default).toBe(true);
    });

    it('deletes a caption (answering it); its signed URLs stop working; deleting the video deletes its captions', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      const d = await addCaption(videoId, { language: 'de', content: SRT });
      const res = await org.api.delete(`${P}/captions/${c.id}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(c.id);
      expect(Object.keys(res.body).sort()).toEqual(CAPTION_KEYS);
      expect((await org.api.get(`${P}/captions/${c.id}`)).status).toBe(404);
      expect((await org.api.delete(`${P}/captions/${c.id}`)).status).toBe(404);
      expect((await client(t.app).get(local(c.vtt_url))).status).toBe(404);
      expect((await org.api.delete(`${P}/videos/${videoId}`)).status).toBe(200);
      expect((await org.api.get(`${P}/captions/${d.id}`)).status).toBe(404);
    });
  });

  describe('files in the media store', () => {
    const store = () => t.container.media.store;
    const uuidOf = async (videoId: number) => (await org.api.get(`${P}/videos/${videoId}`)).body.uuid as string;
    const rowOf = (id: number) => t.database.db.selectFrom('captions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('keeps the WebVTT as a file under the video; a new file replaces it, deleting the caption removes it', async () => {
      const videoId = await newVideo();
      const uuid = await uuidOf(videoId);
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      const first = (await rowOf(c.id)).file_key!;
      expect(first).toMatch(new RegExp(`^videos/${uuid}/captions/[0-9a-f]{12}\\.vtt$`));
      expect(await rowOf(c.id)).toMatchObject({ content: null });
      expect((await store().stat(first))?.size).toBe(Buffer.byteLength(SRT_AS_VTT));

      expect((await org.api.patch(`${P}/captions/${c.id}`, { content: VTT })).status).toBe(200);
      const second = (await rowOf(c.id)).file_key!;
      expect(second).toMatch(new RegExp(`^videos/${uuid}/captions/[0-9a-f]{12}\\.vtt$`));
      expect(second).not.toBe(first);
      expect(await store().stat(second)).not.toBeNull();
      expect(await store().stat(first)).toBeNull();
      expect((await org.api.get(`${P}/captions/${c.id}/content`)).raw).toContain('Bonjour');

      expect((await org.api.delete(`${P}/captions/${c.id}`)).status).toBe(200);
      expect(await store().stat(second)).toBeNull();
    });

    it('a write refused inside its transaction keeps no file: the file stored before it is removed again', async () => {
      const videoId = await newVideo();
      const uuid = await uuidOf(videoId);
      const now = Math.floor(Date.now() / 1000);
      const rows = Array.from({ length: MAX_CAPTIONS_PER_VIDEO }, (_, i) => ({
        organization_id: org.organizationId,
        video_id: videoId,
        language: 'en',
        status: 'draft',
        is_default: false,
        revision: 1,
        created_at: now + i,
        updated_at: now,
      }));
      await t.database.db.insertInto('captions').values(rows).execute();
      const refused = await org.api.post(`${P}/videos/${videoId}/captions`, { language: 'en', content: SRT });
      expect(refused.status, refused.raw).toBe(422);
      const kept = await t.database.db.selectFrom('captions').select('file_key').where('video_id', '=', videoId).where('file_key', 'is not', null).execute();
      expect(kept).toEqual([]);
      const store = t.container.media.store;
      if (store instanceof LocalFileStore) {
        const folder = path.join(store.root, 'videos', uuid, 'captions');
        expect(fs.existsSync(folder) ? fs.readdirSync(folder) : []).toEqual([]);
      } else {
        expect(await t.database.db.selectFrom('stored_objects').select('key').where('key', 'like', `videos/${uuid}/captions/%`).execute()).toEqual([]);
      }
    });

    it('a fetched file goes to the store; a failed one leaves nothing', async () => {
      const videoId = await newVideo();
      const uuid = await uuidOf(videoId);
      const ok = await addCaption(videoId, { language: 'en', srt_url: `${base}/captions.srt` });
      const bad = await addCaption(videoId, { language: 'fr', vtt_url: `${base}/broken.vtt` });
      await drain();
      expect(await rowOf(ok.id)).toMatchObject({ status: 'complete', file_key: `videos/${uuid}/captions/${ok.id}-r1.vtt`, content: null });
      expect((await org.api.get(`${P}/captions/${ok.id}/content`)).raw).toBe(SRT_AS_VTT);
      expect(await rowOf(bad.id)).toMatchObject({ status: 'error', file_key: null });
      expect(await store().stat(`videos/${uuid}/captions/${bad.id}-r1.vtt`)).toBeNull();
    });

    it('serves a caption written before files moved to the store, and moves it there unchanged', async () => {
      const videoId = await newVideo();
      const c = await addCaption(videoId, { language: 'en', content: SRT });
      // As a caption of an older release: the WebVTT in the row, no file.
      await store().delete(`videos/${await uuidOf(videoId)}/captions`);
      await t.database.db.updateTable('captions').set({ content: SRT_AS_VTT, file_key: null }).where('id', '=', c.id).execute();
      expect((await org.api.get(`${P}/captions/${c.id}/content`)).raw).toBe(SRT_AS_VTT);
      expect(await t.services.captions.storeLegacyFiles(1)).toBeGreaterThanOrEqual(1);
      const row = await rowOf(c.id);
      expect(row.content).toBeNull();
      expect(await store().stat(row.file_key!)).not.toBeNull();
      expect((await org.api.get(`${P}/captions/${c.id}/content`)).raw).toBe(SRT_AS_VTT);
      expect((await client(t.app).get(local(c.vtt_url))).raw).toBe(SRT_AS_VTT);
      expect(await t.services.captions.storeLegacyFiles()).toBe(0);
    });
  });

  describe('listing', () => {
    let videoId: number;
    let ids: Record<string, number>;
    beforeAll(async () => {
      videoId = await newVideo();
      ids = {};
      for (const language of ['fr', 'en-US', 'de', 'en', 'enm']) ids[language] = (await addCaption(videoId, { language, content: SRT })).id;
      await org.api.patch(`${P}/captions/${ids.de}/publish`);
      await org.api.patch(`${P}/captions/${ids.fr}/draft`);
      // Make created_at/updated_at differ deterministically.
      let n = 0;
      for (const language of ['fr', 'en-US', 'de', 'en', 'enm']) {
        await t.database.db
          .updateTable('captions')
          .set({ created_at: 1_000 + n, updated_at: 2_000 - n })
          .where('id', '=', ids[language])
          .execute();
        n++;
      }
    });
    const langs = (body: any[]) => body.map((c) => c.language);

    it('answers a bare array in id order without per_page', async () => {
      const res = await org.api.get(`${P}/videos/${videoId}/captions`);
      expect(res.status).toBe(200);
      expect(langs(res.body)).toEqual(['fr', 'en-US', 'de', 'en', 'enm']);
      expect(Object.keys(res.body[0]).sort()).toEqual(CAPTION_KEYS);
    });

    it('filters by language (a tag also matches its subtags) and status, in every array form', async () => {
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?language=en`)).body)).toEqual(['en-US', 'en']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?language=EN_us`)).body)).toEqual(['en-US']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?language=fr,de`)).body)).toEqual(['fr', 'de']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?language[]=fr&language[]=enm`)).body)).toEqual(['fr', 'enm']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?status=published`)).body)).toEqual(['de']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?status=draft&status=published`)).body)).toEqual(['fr', 'de']);
      expect(langs((await org.api.get(`${P}/videos/${videoId}/captions?status=complete&language=en`)).body)).toEqual(['en-US', 'en']);
      expect((await org.api.get(`${P}/videos/${videoId}/captions?status=error`)).body).toEqual([]);
    });

    it('sorts by language, created_at and updated_at in both directions (ties by id)', async () => {
      const get = async (q: string) => langs((await org.api.get(`${P}/videos/${videoId}/captions?${q}`)).body);
      expect(await get('sort_by=language')).toEqual(['de', 'en', 'en-US', 'enm', 'fr']);
      expect(await get('sort_by=language&direction=desc')).toEqual(['fr', 'enm', 'en-US', 'en', 'de']);
      expect(await get('sort_by=created_at&direction=desc')).toEqual(['enm', 'en', 'de', 'en-US', 'fr']);
      expect(await get('sort_by=updated_at')).toEqual(['enm', 'en', 'de', 'en-US', 'fr']);
      expect(await get('direction=desc')).toEqual(['enm', 'en', 'de', 'en-US', 'fr']);
    });

    it('pages with the envelope and the total count', async () => {
      const res = await org.api.get(`${P}/videos/${videoId}/captions?sort_by=language&per_page=2&page=2`);
      expect(res.body.summary).toEqual({ page: 2, per_page: 2, count: 5 });
      expect(langs(res.body.captions)).toEqual(['en-US', 'enm']);
      const filtered = await org.api.get(`${P}/videos/${videoId}/captions?language=en&per_page=1`);
      expect(filtered.body.summary).toEqual({ page: 1, per_page: 1, count: 2 });
    });

    it('answers CSV when asked', async () => {
      const res = await org.api.get(`${P}/videos/${videoId}/captions?language=de`, { accept: 'text/csv' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.raw.split('\n')[0]).toMatch(/^id,video_id,language,status,is_default/);
    });

    it('refuses bad filters, sort fields and directions with 422', async () => {
      for (const q of ['status=done', 'sort_by=name', 'direction=up', 'language=klingon!', 'per_page=500']) {
        const res = await org.api.get(`${P}/videos/${videoId}/captions?${q}`);
        expect(res.status, q).toBe(422);
        expect(res.body.code).toBe('validation_failed');
      }
    });
  });
});
