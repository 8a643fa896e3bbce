/**
 * GET /ops/v1/stream: the console's live changes as server-sent events. Every
 * open stream listens to the instance's one ChangeFeed poller
 * (platform/changes/change-feed.ts); it sends `event: change` with the change as
 * JSON, and a `: ping` comment every 15 s. The answer is hijacked from Fastify's
 * reply (no onSend hooks), so it sets `cache-control: no-store`, `nosniff` and
 * `x-accel-buffering: no` (no proxy buffering) itself. On shutdown (preClose) every
 * stream is ended, so the graceful close never waits on an open stream.
 * A stream opened with the console's session cookie re-checks the session every
 * SESSION_RECHECK_MS and ends once it is revoked (signed out on any instance) or
 * expired; the console's reconnect is then refused (401).
 */
import { Type } from 'typebox';
import type { ChangeFeed } from '../changes/change-feed.js';
import { SESSION_COOKIE } from '../../contract/ops-console.js';
import { cookieValue, type ConsoleSessions } from './console-session.js';
import type { App } from './types.js';

export const PING_MS = 15_000;
export const SESSION_RECHECK_MS = 5_000;

export async function changeStreamRoute(app: App, feed: ChangeFeed, sessions?: ConsoleSessions): Promise<void> {
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    '/ops/v1/stream',
    {
      schema: {
        tags: ['ops'],
        summary: 'Live changes (text/event-stream): `event: change` with {kind, id, projectId} from any instance; `: ping` every 15 s',
        security: [{ opsToken: [] }],
        produces: ['text/event-stream'],
        response: {
          200: Type.String({
            description:
              'An event stream: `event: change` / `data: {"kind":"meeting"|"delivery"|"device"|"visitor"|"clock","id":…,"projectId":…}`',
          }),
        },
      },
    },
    async (req, reply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      res.flushHeaders();
      res.write('retry: 3000\n: connected\n\n');
      let ended = false;
      const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
      const unsubscribe = feed.subscribe((c) => {
        res.write(`event: change\ndata: ${JSON.stringify(c)}\n\n`);
      });
      // The guard let a cookie through only when no Authorization header was sent (authenticate.ts).
      const cookie = sessions && req.headers.authorization === undefined ? cookieValue(req.headers.cookie, SESSION_COOKIE) : undefined;
      const recheck =
        cookie === undefined
          ? undefined
          : setInterval(() => {
              // A store that cannot be reached ends nothing; the next recheck decides.
              sessions!.verify(cookie).then(
                (valid) => valid === null && end(),
                () => {},
              );
            }, SESSION_RECHECK_MS);
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(ping);
        if (recheck) clearInterval(recheck);
        unsubscribe();
        open.delete(end);
        res.end();
      };
      open.add(end);
      req.raw.on('close', end);
      res.on('close', end);
    },
  );
}
