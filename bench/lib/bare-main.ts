/**
 * The bare baseline in its own process: Fastify with no auth, no validation and
 * no database, answering the service's envelope shape. `GET /bare` answers a
 * small object; `POST /bare` parses the JSON body and echoes it with 201.
 * Answers `cpu` and `stop` over IPC like every bench subject.
 */
import Fastify from 'fastify';
import { failed, serve } from './rpc-child.js';

async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  app.get('/bare', async () => ({ code: 'KS000', success: true, message: 'Success', data: { status: 'ok' } }));
  app.post('/bare', async (req, reply) => reply.status(201).send({ code: 'KS000', success: true, message: 'Success', data: req.body }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  serve({}, () => app.close()).ready({ url, pid: process.pid });
}

main().catch(failed);
