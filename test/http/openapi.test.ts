/** The OpenAPI description and the reference page each environment serves. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startTestService, type TestService } from '../support/test-service.js';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES, eventDeliverySchema } from '../../src/contract/events.js';
import { driveEveryEvent, startEveryEventService, type EveryEventCtx } from '../support/every-event.js';
import { OPERATIONS } from '../../sdk/src/client.js';

// CommonJS packages: the constructor and the plugin sit on `default`.
const Ajv2020 = ((Ajv2020Module as any).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

describe('OpenAPI and reference', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /openapi.json is OpenAPI 3.1.x for interface version 1.15.0', async () => {
    const res = await svc.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.openapi).toMatch(/^3\.1\.\d+$/);
    expect(res.body.info.version).toBe('1.15.0');
    expect(res.body.info.title).toBeTypeOf('string');
  });

  it('describes the token endpoint and the sandbox clock', async () => {
    const { body } = await svc.request('GET', '/openapi.json');
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(['/auth/accessToken', '/ops/v1/clock']));
    expect(body.paths['/auth/accessToken'].post).toBeDefined();
    expect(body.paths['/ops/v1/clock'].get).toBeDefined();
    expect(body.paths['/ops/v1/clock'].post).toBeDefined();
    // The token endpoint answers 201 with a non-enveloped token response.
    const created = body.paths['/auth/accessToken'].post.responses['201'];
    expect(created).toBeDefined();
    const schema = created.content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['access_token', 'expires_in']));
    expect(schema.properties).not.toHaveProperty('token_type');
    expect(schema.properties).not.toHaveProperty('code');
  });

  it('documents that the token endpoint needs no bearer token, and that API routes do', async () => {
    const { body } = await svc.request('GET', '/openapi.json');
    expect(body.paths['/auth/accessToken'].post.security).toEqual([]);
    const revoke = body.paths['/auth/revoke'].post.security ?? body.security;
    expect(revoke).toEqual([{ bearer: [] }]);
    expect(body.paths['/ops/v1/clock'].get.security).toEqual([{ opsToken: [] }]);
  });

  it('is served without a token', async () => {
    const res = await svc.request('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
  });

  it('GET /docs (following redirects) serves an HTML page', async () => {
    const res = await fetch(`${svc.url}/docs`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toMatch(/<html/i);
  });
});

describe('OpenAPI webhooks: the delivery of every event type, from the schemas the service signs', () => {
  let e: EveryEventCtx;
  let doc: any;
  beforeAll(async () => {
    e = await startEveryEventService({ visitors: true });
    await driveEveryEvent(e, { visitors: true });
    const res = await e.c.svc.request('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => {
    await e?.close();
  });

  const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));
  const bodySchema = (type: string) => doc.webhooks[type].post.requestBody.content['application/json'].schema;

  it('lists exactly the event types of the catalogue, each a post with a stable operationId, a summary, a description, the signature headers and 2XX', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    const operationIds = new Set<string>();
    for (const type of EVENT_TYPES) {
      const entry = doc.webhooks[type];
      expect(Object.keys(entry), type).toEqual(['post']);
      const op = entry.post;
      expect(op.operationId, type).toMatch(/^[a-z][A-Za-z]+Event$/);
      operationIds.add(op.operationId);
      expect(op.summary, type).toBeTypeOf('string');
      expect(op.summary.length, type).toBeGreaterThan(10);
      expect(op.description, type).toMatch(/X-Service-Signature/);
      if (!type.startsWith('VMS_')) expect(op.description, type).toMatch(/GET \/meetings\/\{meetingId\}/);
      expect(op.security, type).toEqual([]);
      const headers = Object.fromEntries(op.parameters.map((p: any) => [p.name, p]));
      for (const name of [
        'X-Service-Event',
        'X-Service-Delivery',
        'X-Service-Timestamp',
        'X-Service-Signature',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]) {
        expect(headers[name], `${type} ${name}`).toMatchObject({ in: 'header', required: true });
        expect(headers[name].description, `${type} ${name}`).toBeTypeOf('string');
      }
      expect(headers['X-Service-Event'].schema.const).toBe(type);
      expect(op.requestBody.required).toBe(true);
      expect(Object.keys(op.responses)).toEqual(['2XX', 'default']);
    }
    // operationIds are unique, in the webhooks and against the paths.
    expect(operationIds.size).toBe(EVENT_TYPES.length);
    const pathIds = Object.values(doc.paths)
      .flatMap((item: any) => Object.values(item).map((op: any) => op?.operationId))
      .filter(Boolean);
    for (const id of pathIds) expect(operationIds.has(id), id).toBe(false);
  });

  it("each body schema is the contract's schema of that type: the envelope with its type fixed, and the catalogue's data schema", () => {
    for (const type of EVENT_TYPES) {
      const published = bodySchema(type);
      expect(published, type).toEqual(plain(eventDeliverySchema(type)));
      expect(published.properties.data, type).toEqual(plain(EVENT_DATA_SCHEMAS[type]));
      expect(published.properties.type.const, type).toBe(type);
      expect(published.required, type).toEqual(expect.arrayContaining(['id', 'type', 'version', 'occurredAt', 'projectId', 'data']));
      if (!type.startsWith('VMS_')) {
        expect(published.properties.data.required, type).toEqual(expect.arrayContaining(['meetingId', 'assetId', 'assetKind']));
        expect(Object.keys(published.properties.data.properties), type).toContain('occurrenceEventId');
      }
    }
  });

  it("a real delivered body of each event type validates against its published schema (ajv, JSON Schema 2020-12), and not against another type's", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validators = Object.fromEntries(EVENT_TYPES.map((type) => [type, ajv.compile(bodySchema(type))]));
    const delivered = e.deliveries();
    for (const type of EVENT_TYPES) {
      const ofType = delivered.filter((r) => r.body?.type === type);
      expect(ofType.length, `no ${type} delivered`).toBeGreaterThan(0);
      for (const r of ofType) {
        const body = JSON.parse(r.raw.toString('utf8'));
        const ok = validators[type](body);
        expect(ok, `${type}: ${JSON.stringify(validators[type].errors)} ${r.raw.toString('utf8')}`).toBe(true);
      }
      // The type is fixed: the same body is not a delivery of another type.
      const other = EVENT_TYPES.find((t) => t !== type)!;
      expect(validators[other](JSON.parse(ofType[0].raw.toString('utf8'))), `${type} as ${other}`).toBe(false);
    }
    // A booking event without the field that names its booking is refused by the published schema.
    const book = delivered.find((r) => r.body.type === 'ROOM_BOOK')!;
    const { meetingId: _gone, ...withoutId } = book.body.data;
    expect(validators.ROOM_BOOK({ ...book.body, data: withoutId })).toBe(false);
  });
});

/** The operationIds of every operation, by `METHOD path`: changing one breaks generated clients, so it is a deliberate edit here. */
const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'health',
  'GET /readyz': 'ready',
  'POST /auth/accessToken': 'requestToken',
  'POST /auth/revoke': 'revoke',
  'GET /auth/whoami': 'whoami',
  'GET /meeting-rooms': 'searchRooms',
  'GET /meeting-rooms/{id}': 'getRoom',
  'GET /desks': 'searchDesks',
  'GET /desks/{id}': 'getDesk',
  'POST /meetings': 'createMeeting',
  'GET /meetings': 'listMeetings',
  'GET /meetings/{id}': 'getMeeting',
  'PATCH /meetings/{id}': 'updateMeeting',
  'POST /meetings/{id}/cancel': 'cancelMeeting',
  'POST /meetings/{id}/check-in': 'checkIn',
  'POST /meetings/{id}/check-out': 'checkOut',
  'PUT /partner/members/{externalUserId}': 'putMember',
  'GET /partner/members/{externalUserId}': 'getMember',
  'DELETE /partner/members/{externalUserId}': 'deleteMember',
  'PUT /partner/members/{externalUserId}/credentials': 'putCredentials',
  'POST /ops/v1/session': 'signInConsole',
  'GET /ops/v1/session': 'getConsoleSession',
  'DELETE /ops/v1/session': 'signOutConsole',
  'GET /ops/v1/clock': 'getSandboxClock',
  'POST /ops/v1/clock': 'moveSandboxClock',
  'POST /ops/v1/apply': 'applySiteDocument',
  'GET /ops/v1/webhooks': 'listWebhookListeners',
  'GET /ops/v1/webhooks/{id}': 'getWebhookListener',
  'POST /ops/v1/webhooks/{id}/enable': 'enableWebhookListener',
  'GET /ops/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /ops/v1/deliveries/{deliveryId}/redeliver': 'redeliverDelivery',
  'GET /ops/v1/payments': 'listPayments',
  'POST /payments/webhooks/{providerId}': 'receiveProviderEvent',
  'GET /ops/v1/payments/{paymentId}': 'getPayment',
  'GET /ops/v1/meetings/{id}/payment': 'getMeetingPayment',
  'POST /ops/v1/payments/{paymentId}/settle': 'settlePayment',
  'POST /ops/v1/payments/{paymentId}/fail': 'failPayment',
  'GET /ops/v1/devices': 'listDevices',
  'GET /ops/v1/devices/{deviceId}': 'getDevice',
  'POST /ops/v1/devices/{deviceId}/offline': 'setDeviceOffline',
  'POST /ops/v1/devices/{deviceId}/online': 'setDeviceOnline',
  'POST /ops/v1/devices/{deviceId}/badge': 'badgeAtDevice',
  'GET /ops/v1/access-entries': 'listAccessEntries',
  'GET /ops/v1/analytics/utilisation': 'getUtilisation',
  'GET /ops/v1/analytics/organizers': 'getOrganizerReport',
  'GET /ops/v1/analytics/status': 'getAnalyticsStatus',
  'POST /ops/v1/calendar-sync/{provider}/messages': 'receiveCalendarMessage',
  'POST /ops/v1/visitors/invites': 'createVisitorInvite',
  'GET /ops/v1/visitors/invites': 'listVisitorInvites',
  'POST /ops/v1/visitors/invites/{inviteId}/cancel': 'cancelVisitorInvite',
  'GET /ops/v1/visitors/invites/{inviteId}': 'getVisitorInvite',
  'POST /ops/v1/devices/{deviceId}/scans': 'recordDeviceScan',
  'POST /calendar/webhooks/{connectionId}': 'receiveCalendarNotification',
  'POST /devices/isapi/{deviceId}/events/{token}': 'receiveIsapiNotification',
  'GET /ops/v1/calendar-sync/connections/{id}': 'getCalendarConnection',
  'GET /iclock/cdata': 'zktecoHandshake',
  'POST /iclock/cdata': 'zktecoUpload',
  'GET /iclock/getrequest': 'zktecoGetRequest',
  'POST /iclock/devicecmd': 'zktecoCommandResults',
  'POST /iclock/querydata': 'zktecoQueryData',
  'GET /ops/v1/calendar-sync/rooms/{roomId}/feed': 'getRoomFeed',
  'DELETE /ops/v1/calendar-sync/rooms/{roomId}/feed': 'revokeRoomFeed',
  'POST /ops/v1/calendar-sync/rooms/{roomId}/feed/rotate': 'rotateRoomFeed',
  'GET /ops/v1/meetings': 'listAllMeetings',
  'GET /ops/v1/meetings/{id}': 'getMeetingDetail',
  'POST /ops/v1/meetings/{id}/cancel': 'staffCancelMeeting',
  'GET /ops/v1/floors/{floorId}/now': 'getFloorNow',
  'GET /ops/v1/assets/{assetId}/day': 'getAssetDay',
  'GET /ops/v1/site': 'getSiteOverview',
  'GET /ops/v1/stream': 'streamChanges',
};

describe('OpenAPI operations: ids, descriptions, examples', () => {
  let svc: TestService;
  let spec: any;
  let operations: { key: string; op: any }[];
  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true });
    spec = (await svc.request('GET', '/openapi.json')).body;
    operations = [];
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (['get', 'put', 'post', 'patch', 'delete'].includes(method)) operations.push({ key: `${method.toUpperCase()} ${path}`, op });
      }
    }
  });
  afterAll(async () => {
    await svc.close();
  });

  it('every operation has a unique camelCase operationId, the one listed here', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(Object.fromEntries(operations.map(({ key, op }) => [key, op.operationId]))).toEqual(OPERATION_IDS);
  });

  it('the public operations carry the SDK method names (sdk OPERATIONS)', () => {
    for (const [key, method] of Object.entries(OPERATIONS)) expect(OPERATION_IDS[key], key).toBe(method);
  });

  it('every operation has a description of its own (not just the summary)', () => {
    for (const { key, op } of operations) {
      expect(typeof op.description, key).toBe('string');
      expect(op.description.length, key).toBeGreaterThan(30);
      expect(op.description, key).not.toBe(op.summary);
    }
  });

  it('every request body and every success answer has an example that validates against its own schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const problems: string[] = [];
    const check = (where: string, media: any) => {
      if (!media?.schema) return;
      if (!('example' in media)) {
        problems.push(`${where}: no example`);
        return;
      }
      const validate = ajv.compile(media.schema);
      if (!validate(media.example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const { key, op } of operations) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) check(`${key} request ${type}`, media);
      const success = Object.entries<any>(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      expect(success.length, key).toBeGreaterThan(0);
      let examples = 0;
      for (const [status, response] of success) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          check(`${key} ${status} ${type}`, media);
          examples += 1;
        }
      }
      // 204 answers have no body; the event stream is text/event-stream without a schema.
      const bodiless = success.every(([status]) => status === '204') || key === 'GET /ops/v1/stream';
      if (examples === 0 && !bodiless) problems.push(`${key}: no success answer with content`);
    }
    expect(problems).toEqual([]);
  });
});
