/**
 * Negotiated compression of large answers (@fastify/compress): gzip, br or
 * deflate as the client's Accept-Encoding allows, for answers of 1 KB and more
 * whose type compresses (JSON, HTML, text). A 50k-room list is tens of MB as
 * JSON and a few MB compressed. Answers up to 64 KB are compressed inline; larger
 * ones stream through zlib on the thread pool, so the event loop is not held.
 * Brotli runs at quality 4 (the plugin's default), not zlib's 11.
 *
 * Not compressed: answers without Accept-Encoding (identity), small answers, and
 * the console's event stream (text/event-stream: hijacked, and excluded here too,
 * since a compressor would hold events back). Request bodies are not
 * decompressed: a compressed upload would get past the body limits.
 * Registered after the security headers hook, so every header it set stays.
 */
import compress from '@fastify/compress';
import type { App } from './types.js';

/** Answers smaller than this go out as they are. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

export async function registerCompression(app: App): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD_BYTES,
    syncThreshold: 64 * 1024,
    encodings: ['br', 'gzip', 'deflate'],
    customTypes: (type: string) =>
      !/^text\/event-stream/i.test(type) && /^(application\/(json|[\w.+-]+\+json|javascript|xml)|text\/|image\/svg\+xml)/i.test(type),
  });
}
