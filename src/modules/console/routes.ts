/**
 * The operator console's static files (docs/console-screens.md): `/console` is the
 * HTML shell, `/console/assets/*` the bundle built by `npm run build:console`
 * into dist/console. No authentication here: the page holds no data, and every
 * call it makes goes to the ops API, which needs the session cookie (or the
 * token). The strict page policy comes from PAGE_POLICIES (security-headers.ts).
 * When the bundle was not built, `/console` says so (503) instead of a blank page.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errors } from '../../platform/errors.js';

/** dist/console of this checkout: the same from src/modules/console (tsx) and dist/modules/console (npm start). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

const ASSET_NAME = /^[a-z0-9-]{1,64}\.(js|css)$/;
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head><body>' +
  '<h1>The operator console is not built</h1><p>Run <code>npm run build:console</code> (or <code>npm run build</code>) and reload.</p>' +
  '</body></html>';

async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}

export async function consoleRoutes(app: App, dir: string = CONSOLE_DIST): Promise<void> {
  const shell = async (_req: unknown, reply: FastifyReply) => {
    const html = await readOrNull(`${dir}index.html`);
    reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    if (!html) return reply.status(503).send(NOT_BUILT);
    return reply.send(html);
  };
  app.get('/console', { schema: { hide: true } }, shell);
  app.get('/console/', { schema: { hide: true } }, shell);

  app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (req, reply) => {
    const name = req.params.file;
    const match = ASSET_NAME.exec(name);
    const body = match ? await readOrNull(`${dir}assets/${name}`) : null;
    if (!match || !body) throw errors.notFound(`No console asset ${name}`);
    return reply.header('cache-control', 'no-cache').type(TYPES[match[1]!]!).send(body);
  });
}
