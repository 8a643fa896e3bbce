/**
 * The ZKTeco PUSH (ADMS) endpoints the terminals poll (public: a terminal is known by its registered
 * serial number; an unknown one gets the usual 404 envelope and nothing of the protocol, logged at most once a minute per serial).
 * Bodies are text (tab-separated records), in their own scope; answers are text/plain.
 */
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../../platform/http/types.js';
import { errors } from '../../../platform/errors.js';
import { ErrorEnvelope } from '../../../contract/envelope.js';
import type { ZkAnswer, ZktecoService } from './zkteco-service.js';

/** Largest upload accepted (a face photo query answer, a batch of logs). */
const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const Query = Type.Object(
  { SN: Type.Optional(Type.String({ description: "The terminal's serial number" })) },
  { additionalProperties: Type.String() },
);
const TEXT = { 200: Type.String(), 404: ErrorEnvelope };

export interface ZktecoRouteDeps {
  zkteco: ZktecoService;
}

type Q = Record<string, string | undefined>;

export async function zktecoRoutes(app: App, deps: ZktecoRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) => done(null, body));
    const z = deps.zkteco;
    const send = (req: FastifyRequest, reply: FastifyReply, answer: ZkAnswer) => {
      const serial = (req.query as Q).SN ?? '';
      if (answer.status === 404) {
        if (z.shouldLogUnknown(serial)) req.log.warn({ serialNumber: serial.slice(0, 64) }, 'zkteco: unknown serial number');
        // Nothing for a terminal the site does not name: the usual not-found answer, no protocol text.
        throw errors.notFound('Not found');
      }
      return reply.code(answer.status).type('text/plain; charset=utf-8').send(answer.text);
    };
    const schema = (summary: string, description: string) => ({
      tags: ['devices'],
      summary,
      description,
      security: [],
      querystring: Query,
      response: TEXT,
    });
    const text = (b: unknown) => (typeof b === 'string' ? b : '');
    scope.get(
      '/iclock/cdata',
      { schema: schema('ZKTeco PUSH handshake', 'The terminal asks for its options (options=all): stamps, poll delay, time zone.') },
      async (req, reply) => send(req, reply, await z.handshake(req.query as Q)),
    );
    scope.post(
      '/iclock/cdata',
      {
        bodyLimit: BODY_LIMIT_BYTES,
        schema: schema('ZKTeco PUSH upload', 'Access logs (table=rtlog or ATTLOG) become door events; answers OK: <lines>.'),
      },
      async (req, reply) => send(req, reply, await z.upload(req.query as Q, text(req.body))),
    );
    scope.get(
      '/iclock/getrequest',
      { schema: schema('ZKTeco PUSH command poll', 'The pending commands as C:<id>:<command> lines; OK when none.') },
      async (req, reply) => send(req, reply, await z.getrequest((req.query as Q).SN)),
    );
    scope.post(
      '/iclock/devicecmd',
      {
        bodyLimit: BODY_LIMIT_BYTES,
        schema: schema('ZKTeco PUSH command results', 'ID=<id>&Return=<code>&CMD=<verb> per line.'),
      },
      async (req, reply) => send(req, reply, await z.devicecmd((req.query as Q).SN, text(req.body))),
    );
    scope.post(
      '/iclock/querydata',
      {
        bodyLimit: BODY_LIMIT_BYTES,
        schema: schema('ZKTeco PUSH query answer', 'Rows of a table the service asked for (paged by packcnt/packidx).'),
      },
      async (req, reply) => send(req, reply, await z.querydata(req.query as Q, text(req.body))),
    );
  });
}
