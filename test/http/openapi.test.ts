/** The OpenAPI description and the reference page each environment serves. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES, eventDeliverySchema } from '../../src/contract/events.js';
import { driveEveryEvent, startEveryEventService, type EveryEventCtx } from '../support/every-event.js';

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
      for (const name of ['X-Service-Event', 'X-Service-Delivery', 'X-Service-Timestamp', 'X-Service-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        expect(headers[name], `${type} ${name}`).toMatchObject({ in: 'header', required: true });
        expect(headers[name].description, `${type} ${name}`).toBeTypeOf('string');
      }
      expect(headers['X-Service-Event'].schema.const).toBe(type);
      expect(op.requestBody.required).toBe(true);
      expect(Object.keys(op.responses)).toEqual(['2XX', 'default']);
    }
    // operationIds are unique, in the webhooks and against the paths.
    expect(operationIds.size).toBe(EVENT_TYPES.length);
    const pathIds = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op?.operationId)).filter(Boolean);
    for (const id of pathIds) expect(operationIds.has(id), id).toBe(false);
  });

  it('each body schema is the contract\'s schema of that type: the envelope with its type fixed, and the catalogue\'s data schema', () => {
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

  it('a real delivered body of each event type validates against its published schema (ajv, JSON Schema 2020-12), and not against another type\'s', () => {
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
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
