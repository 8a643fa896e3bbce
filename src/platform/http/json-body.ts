/**
 * The JSON body parser: Fastify's own (prototype poisoning refused), except that an
 * empty or whitespace-only body is no body at all. A route whose body is optional
 * then reads it as `{}` (the meeting actions); a route that needs one answers 400
 * from validation. A non-empty body that is not JSON is still 400.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: unknown) => void;

export function registerJsonBodyParser(app: FastifyInstance): void {
  const standard = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req: FastifyRequest, body: string | Buffer, done: Done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void standard(req, text, done);
  });
}

/** A preValidation hook for routes whose body is optional: no body (or JSON null) is read as `{}`. */
export async function optionalBody(req: { body?: unknown }): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}
