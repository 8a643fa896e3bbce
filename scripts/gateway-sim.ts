/**
 * `npm run gateway:sim`: runs the reference building gateway against a broker.
 *   MQTT_URL            broker (default mqtt://127.0.0.1:1883)
 *   MQTT_TOPIC_PREFIX   topic prefix (default booking)
 *   GATEWAY_STATE_FILE  optional JSON file keeping the devices' memory across restarts; without it
 *                       every start is a gateway that lost its memory: its new bootId makes the
 *                       service ask for every inventory and send the devices everything again
 * A line on stdin `event <deviceId> <cardNo> [refused]` publishes an access event at that device (a card
 * presented; granted unless `refused`), as the door would.
 * Ctrl-C stops it gracefully (gateway status offline); kill -9 leaves it to the last will.
 */
import pino from 'pino';
import { GatewaySimulator } from '../tools/gateway-sim/gateway-sim.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' });
const sim = new GatewaySimulator({
  url: process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883',
  topicPrefix: process.env.MQTT_TOPIC_PREFIX ?? 'booking',
  stateFile: process.env.GATEWAY_STATE_FILE || undefined,
  logger,
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'gateway-sim: stopping');
  await sim.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

await sim.start();

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  for (const line of chunk.split('\n')) {
    const [cmd, deviceId, cardNo, refused] = line.trim().split(/\s+/);
    if (cmd !== 'event' || !deviceId || !cardNo) continue;
    sim
      .publishAccessEvent(deviceId, { granted: refused !== 'refused', cardNo })
      .then((eventId) => logger.info({ deviceId, eventId }, 'gateway-sim: access event published'))
      .catch((err: unknown) => logger.error({ err: (err as Error).message }, 'gateway-sim: access event failed'));
  }
});
