/**
 * What every module's front door (`src/modules/<name>/index.ts`) registers its routes with.
 * A module's `register(app, deps)` is a Fastify plugin: it adds its public routes to `app` and puts
 * the routes that need a caller behind the guard they need, in a scope of their own.
 */
import type { onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify';
import type { App } from './types.js';

/** The two ways a caller proves who it is; app.ts builds them once. */
export interface RouteGuards {
  /** The public API: a bearer access token from POST /auth/accessToken (sets `req.principal`; synchronous on a cached caller). */
  api: onRequestHookHandler;
  /** The operator surface: the ops token, or a console session (CSRF header on writes). */
  ops: onRequestAsyncHookHandler;
}

/** Registers `routes` in a scope of their own where every request first passes `guard`. */
export async function guarded(
  app: App,
  guard: onRequestHookHandler | onRequestAsyncHookHandler,
  routes: (scope: App) => Promise<void>,
): Promise<void> {
  await app.register(async (scope: App) => {
    scope.addHook('onRequest', guard);
    await routes(scope);
  });
}
