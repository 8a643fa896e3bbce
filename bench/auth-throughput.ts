/**
 * Authenticated GET throughput through the full auth layer (bearer → token row →
 * principal with project scope) versus a bare Fastify route, in one run.
 *   npm run bench:auth          (BENCH_SECONDS=10 for longer runs)
 */
import { BENCH_OPS_TOKEN, load, printTable, startBareFastify, startBenchService } from './support.js';

const site = {
  brands: [{ key: 'b', name: 'Bench Brand' }],
  projects: [{ key: 'p', brand: 'b', name: 'Bench Tower', timezone: 'Asia/Bangkok', currency: 'THB' }],
  apps: [{
    key: 'app', appId: 'bench-app', appSecret: 'bench-secret-0123456789abcdef0123456789', name: 'Bench',
    projects: ['p'], projectRoles: [{ project: 'p', permissions: ['MEETING_UPDATE'] }],
  }],
};

const svc = await startBenchService();
const bare = await startBareFastify();
try {
  const applied = await svc.call('POST', '/ops/v1/apply', site, BENCH_OPS_TOKEN);
  if (applied.status !== 200) throw new Error(`apply failed: ${JSON.stringify(applied.body)}`);
  const token = await svc.call('POST', '/auth/accessToken', { grant_type: 'app_credentials', app_id: 'bench-app', app_secret: site.apps[0].appSecret });
  const auth = { authorization: `Bearer ${token.body.access_token}` };

  const baseline = await load('bare Fastify GET', { url: `${bare.url}/bare` });
  const authed = await load('authenticated GET /auth/whoami', { url: `${svc.url}/auth/whoami`, headers: auth });
  printTable([baseline, authed]);
  console.log(`\nratio authenticated / bare throughput: ${(authed.requestsPerSec / baseline.requestsPerSec).toFixed(2)}`);
} finally {
  await bare.close();
  await svc.close();
}
