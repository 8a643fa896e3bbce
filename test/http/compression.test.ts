/**
 * Large answers are compressed when the client asks (Accept-Encoding: gzip, br
 * or deflate), above a 1 KB threshold, keeping every security header; without
 * Accept-Encoding the answer is identity; the console's event stream
 * (text/event-stream) is never compressed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import zlib from 'node:zlib';
import { startTestService, OPS_TOKEN, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { meetingSite } from '../support/meetings.js';

interface RawResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose body is read as sent (no automatic decoding, unlike fetch). */
function raw(url: string, headers: Record<string, string>, opts: { firstChunkOnly?: boolean } = {}): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (opts.firstChunkOnly) {
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
          req.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', (err) => (opts.firstChunkOnly ? undefined : reject(err)));
  });
}

const decode: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  deflate: (b) => zlib.inflateSync(b),
};

describe('negotiated compression of large answers', () => {
  let svc: TestService;
  let ids: SiteIds;
  let token: string;
  let listUrl: string;

  beforeAll(async () => {
    svc = await startTestService();
    ids = await applySite(svc, meetingSite({ rooms: Array.from({ length: 40 }, (_, i) => ({ key: `r${i}`, name: `Room number ${i}` })) }));
    token = (await appToken(svc)).access_token;
    listUrl = `${svc.url}/meeting-rooms?projectId=${idOf(ids, 'tower')}&limit=100`;
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
  });

  it('without Accept-Encoding: identity', async () => {
    const res = await raw(listUrl, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.length).toBeGreaterThan(1024);
    expect(JSON.parse(res.body.toString('utf8')).data.length).toBe(40);
  });

  it.each(['gzip', 'br', 'deflate'])(
    'Accept-Encoding %s: compressed, decodes to the same JSON, security headers kept',
    async (encoding) => {
      const plain = await raw(listUrl, { authorization: `Bearer ${token}` });
      const res = await raw(listUrl, { authorization: `Bearer ${token}`, 'accept-encoding': encoding });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(String(res.headers.vary)).toMatch(/accept-encoding/i);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.length).toBeLessThan(plain.body.length / 2);
      expect(JSON.parse(decode[encoding](res.body).toString('utf8'))).toEqual(JSON.parse(plain.body.toString('utf8')));
    },
  );

  it('a browser-style Accept-Encoding list picks one the service speaks', async () => {
    const res = await raw(listUrl, { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(['gzip', 'br', 'deflate', 'zstd']).toContain(res.headers['content-encoding']);
  });

  it('a small answer (under 1 KB) is sent as it is', async () => {
    const res = await raw(`${svc.url}/healthz`, { 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('the event stream (text/event-stream) is never compressed', async () => {
    const res = await raw(
      `${svc.url}/ops/v1/stream`,
      { authorization: `Bearer ${OPS_TOKEN}`, 'accept-encoding': 'gzip, br' },
      { firstChunkOnly: true },
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.toString('utf8')).toMatch(/^retry: 3000/);
  });
});
