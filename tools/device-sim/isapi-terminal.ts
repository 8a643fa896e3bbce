/**
 * A stand-in for a HikVision access terminal's ISAPI (JSON form), for tests and for a person to try the
 * ISAPI transport without a device: HTTP Digest authentication (MD5, qop=auth, nonces expire) on every
 * /ISAPI path; users, cards and faces with the documented request shapes and limits; the ResponseStatus
 * error shapes; the HTTP host notification list; and `emitAccess` posting an EventNotificationAlert to the
 * registered host. Loopback only.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';

export interface TerminalUser {
  employeeNo: string;
  name: string;
  userType: string;
  Valid: { enable: boolean; beginTime: string; endTime: string; timeType: string };
  cards: string[];
  face: Buffer | null;
}

export interface IsapiTerminalOptions {
  username?: string;
  password?: string;
  /** Most users the terminal holds (maxRecordNum). */
  capacity?: number;
  /** How long a nonce is accepted (ms). */
  nonceMs?: number;
}

export interface AccessOptions {
  employeeNo?: string;
  cardNo?: string;
  granted: boolean;
  verifyMode: 'card' | 'face' | 'fingerPrint' | 'qrCode';
  serialNo?: number;
  /** Local time without offset, or ISO with one; now (UTC offset) by default. */
  dateTime?: string;
  /** Post as multipart/form-data with a picture part (as terminals that upload pictures do). */
  multipart?: boolean;
}

type Json = Record<string, unknown>;
type Answer = { status: number; body: unknown };

const REALM = 'IP Camera(isapi-sim)';
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const MAX_FACE_BYTES = 200 * 1024;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const ok = (extra: Json = {}): Answer => ({ status: 200, body: { statusCode: 1, statusString: 'OK', subStatusCode: 'ok', ...extra } });
/** A ResponseStatus refusal (statusCode 4 Invalid Operation / 6 Invalid Content). */
const refuse = (statusCode: 4 | 6, subStatusCode: string, errorMsg: string, errorCode = 0x60000000): Answer => ({
  status: 400,
  body: { statusCode, statusString: statusCode === 4 ? 'Invalid Operation' : 'Invalid Content', subStatusCode, errorCode, errorMsg },
});

/** Whether a JPEG is baseline (SOF0/SOF1) and not progressive (SOF2). */
function isBaselineJpeg(b: Buffer): boolean {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return false;
  for (let i = 2; i + 3 < b.length;) {
    if (b[i] !== 0xff) return false;
    const marker = b[i + 1]!;
    if (marker === 0xc0 || marker === 0xc1) return true;
    if (marker === 0xc2 || marker === 0xda) return false;
    i += 2 + b.readUInt16BE(i + 2);
  }
  return false;
}

export class IsapiTerminal {
  private server: Server | null = null;
  private port = 0;
  private offline = false;
  private readonly sockets = new Set<Socket>();
  private readonly nonces = new Map<string, number>();
  private readonly store = new Map<string, TerminalUser>();
  private hosts: Json[] = [];
  private password: string;
  readonly username: string;
  capacity: number;
  private readonly nonceMs: number;
  private serial = 0;
  /** Every request: method, path, and the status answered. */
  readonly log: { method: string; path: string; status: number }[] = [];

  constructor(options: IsapiTerminalOptions = {}) {
    this.username = options.username ?? 'admin';
    this.password = options.password ?? 'sim-Passw0rd';
    this.capacity = options.capacity ?? 3000;
    this.nonceMs = options.nonceMs ?? 60_000;
  }

  async start(port = 0): Promise<{ url: string }> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s: Socket) => {
      if (this.offline) return void s.destroy();
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return { url: this.url };
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get currentPassword(): string {
    return this.password;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** The terminal lost its memory (factory reset, replaced): no users, cards, faces or hosts. */
  restartEmpty(): void {
    this.store.clear();
    this.hosts = [];
    this.nonces.clear();
  }

  setPassword(password: string): void {
    this.password = password;
  }

  /** Refuses (resets) every connection while set. */
  setOffline(offline: boolean): void {
    this.offline = offline;
    if (offline) for (const s of this.sockets) s.destroy();
  }

  users(): { employeeNo: string; name: string; Valid: TerminalUser['Valid']; cards: string[]; face: boolean }[] {
    return [...this.store.values()].map((u) => ({
      employeeNo: u.employeeNo,
      name: u.name,
      Valid: { ...u.Valid },
      cards: [...u.cards].sort(),
      face: u.face !== null,
    }));
  }

  httpHosts(): Json[] {
    return this.hosts.map((h) => ({ ...h }));
  }

  /** Adds a user the way an installer does on the device's own screen (not the service's). */
  addLocalUser(employeeNo: string, cards: string[] = []): void {
    this.store.set(employeeNo, {
      employeeNo,
      name: employeeNo,
      userType: 'normal',
      Valid: { enable: false, beginTime: '2000-01-01T00:00:00', endTime: '2037-12-31T23:59:59', timeType: 'local' },
      cards,
      face: null,
    });
  }

  // ----- Digest authentication ----------------------------------------------------

  private challenge(res: ServerResponse, stale = false): void {
    const nonce = randomBytes(16).toString('hex');
    this.nonces.set(nonce, Date.now());
    res.statusCode = 401;
    res.setHeader(
      'WWW-Authenticate',
      `Digest realm="${REALM}", qop="auth", nonce="${nonce}", opaque="${md5(REALM)}", algorithm="MD5", stale="${stale ? 'TRUE' : 'FALSE'}"`,
    );
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        statusCode: 4,
        statusString: 'Invalid Operation',
        subStatusCode: 'unAuthorized',
        errorCode: 0x40000001,
        errorMsg: 'unauthorized',
      }),
    );
  }

  /** Whether the request carries a valid Digest answer; answers the challenge otherwise. */
  private authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Digest ')) return (this.challenge(res), false);
    const p: Record<string, string> = {};
    for (const m of header.slice(7).matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g)) p[m[1]!] = m[2] ?? m[3] ?? '';
    const issued = p.nonce ? this.nonces.get(p.nonce) : undefined;
    if (issued === undefined) return (this.challenge(res), false);
    if (Date.now() - issued > this.nonceMs) return (this.nonces.delete(p.nonce!), this.challenge(res, true), false);
    if (p.username !== this.username || p.qop !== 'auth' || !p.nc || !p.cnonce || p.uri !== req.url) return (this.challenge(res), false);
    const ha1 = md5(`${this.username}:${REALM}:${this.password}`);
    const ha2 = md5(`${req.method}:${p.uri}`);
    const want = Buffer.from(md5(`${ha1}:${p.nonce}:${p.nc}:${p.cnonce}:auth:${ha2}`));
    const got = Buffer.from(p.response ?? '');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return (this.challenge(res), false);
    return true;
  }

  // ----- requests ---------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://terminal');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const record = (status: number): void => void this.log.push({ method: req.method ?? '', path: url.pathname, status });
    if (!url.pathname.startsWith('/ISAPI/')) return (record(404), void res.writeHead(404).end());
    if (!this.authorized(req, res)) return record(401);
    let answer: Answer;
    try {
      answer = await this.route(`${req.method} ${url.pathname}`, body, req.headers['content-type'] ?? '', url.searchParams);
    } catch {
      answer = refuse(6, 'badJsonContent', 'the body is not the expected JSON');
    }
    record(answer.status);
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  }

  private route(key: string, body: Buffer, type: string, query: URLSearchParams): Promise<Answer> | Answer {
    const json = () => JSON.parse(body.toString('utf8') || '{}') as Json;
    switch (key) {
      case 'GET /ISAPI/AccessControl/UserInfo/capabilities':
        return {
          status: 200,
          body: {
            UserInfo: {
              supportFunction: { '@opt': 'post,delete,put,get,setUp' },
              maxRecordNum: this.capacity,
              employeeNo: { '@min': 1, '@max': 32 },
              name: { '@min': 1, '@max': 128 },
              userType: { '@opt': 'normal,visitor,blackList' },
              Valid: { enable: { '@opt': [true, false] }, timeType: { '@opt': 'local,UTC' } },
            },
          },
        };
      case 'GET /ISAPI/AccessControl/UserInfo/Count':
        return {
          status: 200,
          body: {
            UserInfoCount: {
              userNumber: this.store.size,
              bindFaceUserNumber: [...this.store.values()].filter((u) => u.face).length,
              bindCardUserNumber: [...this.store.values()].filter((u) => u.cards.length).length,
            },
          },
        };
      case 'POST /ISAPI/AccessControl/UserInfo/Record':
        return this.writeUser(json(), 'add');
      case 'PUT /ISAPI/AccessControl/UserInfo/Modify':
        return this.writeUser(json(), 'modify');
      case 'PUT /ISAPI/AccessControl/UserInfo/Delete':
        return this.deleteUsers(json());
      case 'POST /ISAPI/AccessControl/UserInfo/Search':
        return this.searchUsers(json());
      case 'POST /ISAPI/AccessControl/CardInfo/Record':
        return this.addCard(json());
      case 'PUT /ISAPI/AccessControl/CardInfo/Delete':
        return this.deleteCards(json());
      case 'POST /ISAPI/AccessControl/CardInfo/Search':
        return this.searchCards(json());
      case 'POST /ISAPI/Intelligent/FDLib/FaceDataRecord':
        return this.addFace(body, type);
      case 'POST /ISAPI/Intelligent/FDLib/FDSearch':
        return this.searchFaces(json());
      case 'PUT /ISAPI/Intelligent/FDLib/FDSearch/Delete':
        return this.deleteFaces(json(), query);
      case 'PUT /ISAPI/Event/notification/httpHosts':
        return this.setHosts(json());
      case 'GET /ISAPI/Event/notification/httpHosts':
        return { status: 200, body: { HttpHostNotificationList: this.hosts.map((h) => ({ HttpHostNotification: h })) } };
      default:
        return {
          status: 404,
          body: {
            statusCode: 4,
            statusString: 'Invalid Operation',
            subStatusCode: 'notSupport',
            errorCode: 0x40000002,
            errorMsg: 'not supported',
          },
        };
    }
  }

  private writeUser(body: Json, mode: 'add' | 'modify'): Answer {
    const info = (Array.isArray(body.UserInfo) ? body.UserInfo[0] : body.UserInfo) as Json | undefined;
    if (!info || typeof info !== 'object') return refuse(6, 'badParameters', 'UserInfo is required');
    const employeeNo = info.employeeNo;
    if (typeof employeeNo !== 'string' || employeeNo.length < 1 || employeeNo.length > 32)
      return refuse(6, 'employeeNoError', 'employeeNo: 1 to 32 characters');
    const valid = info.Valid as TerminalUser['Valid'] | undefined;
    const existing = this.store.get(employeeNo);
    if (mode === 'add') {
      if (existing) return refuse(6, 'deviceUserAlreadyExist', 'the employeeNo already exists');
      if (this.store.size >= this.capacity) return refuse(6, 'deviceUserFull', 'the user list is full');
      if (!valid) return refuse(6, 'badParameters', 'Valid is required');
    } else if (!existing) return refuse(6, 'employeeNoNotExist', 'no user with this employeeNo');
    if (valid) {
      if (typeof valid.enable !== 'boolean' || !TIME.test(valid.beginTime ?? '') || !TIME.test(valid.endTime ?? ''))
        return refuse(6, 'badParameters', 'Valid: enable, beginTime and endTime (YYYY-MM-DDThh:mm:ss)');
      if (valid.beginTime > valid.endTime) return refuse(6, 'beginTimeLargerThanEndTime', 'beginTime after endTime');
      if (valid.endTime > '2037-12-31T23:59:59' || valid.beginTime < '1970-01-01T00:00:00')
        return refuse(6, 'badParameters', 'Valid out of range');
    }
    const name = typeof info.name === 'string' ? info.name : (existing?.name ?? '');
    if (name.length > 128) return refuse(6, 'badParameters', 'name too long');
    const userType = typeof info.userType === 'string' ? info.userType : (existing?.userType ?? 'normal');
    if (!['normal', 'visitor', 'blackList'].includes(userType)) return refuse(6, 'badParameters', 'userType');
    this.store.set(employeeNo, {
      employeeNo,
      name,
      userType,
      Valid: valid
        ? { enable: valid.enable, beginTime: valid.beginTime, endTime: valid.endTime, timeType: valid.timeType ?? 'local' }
        : existing!.Valid,
      cards: existing?.cards ?? [],
      face: existing?.face ?? null,
    });
    return ok();
  }

  private deleteUsers(body: Json): Answer {
    const cond = body.UserInfoDelCond as { EmployeeNoList?: { employeeNo?: string }[] } | undefined;
    if (!cond || !Array.isArray(cond.EmployeeNoList)) return refuse(6, 'badParameters', 'UserInfoDelCond.EmployeeNoList is required');
    for (const e of cond.EmployeeNoList) if (e.employeeNo) this.store.delete(e.employeeNo);
    return ok();
  }

  /** A page of a search (searchID, searchResultPosition and maxResults are required). */
  private page<T>(cond: Json | undefined, all: T[], key: string): Answer {
    if (!cond || typeof cond.searchID !== 'string' || typeof cond.maxResults !== 'number')
      return refuse(6, 'badParameters', 'searchID and maxResults are required');
    const from = Number(cond.searchResultPosition ?? 0);
    const list = all.slice(from, from + Math.min(cond.maxResults, 30));
    const responseStatusStrg = all.length === 0 ? 'NO MATCH' : from + list.length < all.length ? 'MORE' : 'OK';
    return {
      status: 200,
      body: {
        [key]: {
          searchID: cond.searchID,
          responseStatusStrg,
          numOfMatches: list.length,
          totalMatches: all.length,
          ...(list.length ? { [key === 'UserInfoSearch' ? 'UserInfo' : 'CardInfo']: list } : {}),
        },
      },
    };
  }

  private searchUsers(body: Json): Answer {
    const cond = body.UserInfoSearchCond as Json | undefined;
    const only = (cond?.EmployeeNoList as { employeeNo: string }[] | undefined)?.map((e) => e.employeeNo);
    const all = [...this.store.values()]
      .filter((u) => !only || only.includes(u.employeeNo))
      .map((u) => ({
        employeeNo: u.employeeNo,
        name: u.name,
        userType: u.userType,
        Valid: u.Valid,
        numOfCard: u.cards.length,
        numOfFace: u.face ? 1 : 0,
      }));
    return this.page(cond, all, 'UserInfoSearch');
  }

  private addCard(body: Json): Answer {
    const card = body.CardInfo as { employeeNo?: string; cardNo?: string; cardType?: string } | undefined;
    if (!card || typeof card.employeeNo !== 'string' || typeof card.cardNo !== 'string')
      return refuse(6, 'badParameters', 'CardInfo.employeeNo and cardNo are required');
    if (!/^[0-9A-Za-z]{1,20}$/.test(card.cardNo)) return refuse(6, 'cardNoError', 'cardNo: 1 to 20 digits or letters');
    if (!['normalCard', 'patrolCard', 'hijackCard', 'superCard', 'dismissingCard', 'emergencyCard'].includes(card.cardType ?? 'normalCard'))
      return refuse(6, 'badParameters', 'cardType');
    const user = this.store.get(card.employeeNo);
    if (!user) return refuse(6, 'employeeNoNotExist', 'no user with this employeeNo');
    if ([...this.store.values()].some((u) => u.cards.includes(card.cardNo!)))
      return refuse(6, 'cardNoAlreadyExist', 'the card number already exists');
    if (user.cards.length >= 5) return refuse(6, 'cardNumOfUserFull', 'a user holds at most 5 cards');
    user.cards.push(card.cardNo);
    return ok();
  }

  private deleteCards(body: Json): Answer {
    const cond = body.CardInfoDelCond as { CardNoList?: { cardNo: string }[]; EmployeeNoList?: { employeeNo: string }[] } | undefined;
    if (!cond || (!cond.CardNoList && !cond.EmployeeNoList))
      return refuse(6, 'badParameters', 'CardInfoDelCond.CardNoList or EmployeeNoList is required');
    const cards = new Set((cond.CardNoList ?? []).map((c) => c.cardNo));
    const users = new Set((cond.EmployeeNoList ?? []).map((e) => e.employeeNo));
    for (const u of this.store.values()) u.cards = users.has(u.employeeNo) ? [] : u.cards.filter((c) => !cards.has(c));
    return ok();
  }

  private searchCards(body: Json): Answer {
    const cond = body.CardInfoSearchCond as Json | undefined;
    const only = (cond?.EmployeeNoList as { employeeNo: string }[] | undefined)?.map((e) => e.employeeNo);
    const all = [...this.store.values()]
      .filter((u) => !only || only.includes(u.employeeNo))
      .flatMap((u) => u.cards.map((cardNo) => ({ employeeNo: u.employeeNo, cardNo, cardType: 'normalCard' })));
    return this.page(cond, all, 'CardInfoSearch');
  }

  private async addFace(body: Buffer, type: string): Promise<Answer> {
    const parts = await multipart(body, type);
    const record = parts.fields.FaceDataRecord ? (JSON.parse(parts.fields.FaceDataRecord) as Json) : null;
    if (!record) return refuse(6, 'badParameters', 'the FaceDataRecord part is required');
    if (record.faceLibType !== 'blackFD' || record.FDID !== '1' || typeof record.FPID !== 'string')
      return refuse(6, 'badParameters', 'faceLibType blackFD, FDID "1" and FPID are required');
    const user = this.store.get(record.FPID);
    if (!user) return refuse(6, 'employeeNoNotExist', 'no user with this FPID');
    const img = parts.files.img;
    if (!img) return refuse(6, 'badParameters', 'the img part is required');
    if (img.length > MAX_FACE_BYTES) return refuse(6, 'faceDataSizeOverLimit', 'the picture is larger than 200 KB');
    if (!isBaselineJpeg(img)) return refuse(6, 'invalidImageFormat', 'a baseline JPEG is required');
    if (user.face) return refuse(6, 'deviceUserAlreadyExistFace', 'the user already has a face');
    user.face = img;
    return ok({ FPID: record.FPID });
  }

  private searchFaces(body: Json): Answer {
    if (body.faceLibType !== 'blackFD' || body.FDID !== '1' || typeof body.maxResults !== 'number')
      return refuse(6, 'badParameters', 'faceLibType, FDID and maxResults are required');
    const all = [...this.store.values()]
      .filter((u) => u.face && (!body.FPID || u.employeeNo === body.FPID))
      .map((u) => ({ FPID: u.employeeNo }));
    const from = Number(body.searchResultPosition ?? 0);
    const list = all.slice(from, from + body.maxResults);
    return ok({
      responseStatusStrg: all.length === 0 ? 'NO MATCH' : from + list.length < all.length ? 'MORE' : 'OK',
      numOfMatches: list.length,
      totalMatches: all.length,
      MatchList: list,
    });
  }

  private deleteFaces(body: Json, query: URLSearchParams): Answer {
    if (query.get('FDID') !== '1' || query.get('faceLibType') !== 'blackFD')
      return refuse(6, 'badParameters', 'FDID and faceLibType are required');
    const list = body.FPID as { value: string }[] | undefined;
    if (!Array.isArray(list)) return refuse(6, 'badParameters', 'FPID is required');
    for (const f of list) {
      const u = this.store.get(f.value);
      if (u) u.face = null;
    }
    return ok();
  }

  private setHosts(body: Json): Answer {
    const list = body.HttpHostNotificationList as { HttpHostNotification?: Json }[] | undefined;
    if (!Array.isArray(list)) return refuse(6, 'badParameters', 'HttpHostNotificationList is required');
    const hosts = list.map((h) => h.HttpHostNotification).filter((h): h is Json => !!h);
    if (hosts.some((h) => typeof h.url !== 'string' || !h.portNo || !(h.ipAddress || h.hostName)))
      return refuse(6, 'badParameters', 'url, portNo and ipAddress or hostName are required');
    this.hosts = hosts;
    return ok();
  }

  // ----- events -----------------------------------------------------------------

  /** Posts an AccessControllerEvent to the registered host; resolves to the host's HTTP status. */
  async emitAccess(options: AccessOptions): Promise<number> {
    const host = this.hosts[0];
    if (!host) throw new Error('no HTTP host registered');
    const serialNo = options.serialNo ?? ++this.serial;
    const sub = options.granted
      ? { card: 1, face: 75, fingerPrint: 38, qrCode: 104 }[options.verifyMode]
      : { card: options.employeeNo ? 6 : 9, face: 76, fingerPrint: 39, qrCode: 105 }[options.verifyMode];
    const alert = {
      ipAddress: '127.0.0.1',
      portNo: this.port,
      protocol: 'HTTP',
      macAddress: '00:00:5e:00:53:01',
      channelID: 1,
      dateTime: options.dateTime ?? new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      activePostCount: 1,
      eventType: 'AccessControllerEvent',
      eventState: 'active',
      eventDescription: 'Access Controller Event',
      AccessControllerEvent: {
        deviceName: 'isapi-sim',
        majorEventType: 5,
        subEventType: sub,
        ...(options.cardNo ? { cardNo: options.cardNo, cardType: 1 } : {}),
        ...(options.employeeNo ? { employeeNoString: options.employeeNo, name: options.employeeNo } : {}),
        cardReaderNo: 1,
        doorNo: 1,
        serialNo,
        currentVerifyMode: options.verifyMode === 'qrCode' ? 'cardOrFace' : options.verifyMode,
        attendanceStatus: 'undefined',
        statusValue: 0,
        picturesNumber: options.multipart ? 1 : 0,
      },
    };
    return this.post(host, alert, options.multipart ?? false);
  }

  private post(host: Json, alert: Json, asMultipart: boolean): Promise<number> {
    const boundary = `MIME_boundary_${randomBytes(6).toString('hex')}`;
    const json = JSON.stringify(alert);
    const body = asMultipart
      ? Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="event_log"\r\nContent-Type: application/json\r\n\r\n${json}\r\n`,
          ),
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="Picture"; filename="Picture.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
          ),
          Buffer.from([0xff, 0xd8, 0xff, 0xd9]),
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ])
      : Buffer.from(json);
    const type = asMultipart ? `multipart/form-data; boundary=${boundary}` : 'application/json';
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: String(host.ipAddress ?? host.hostName),
          port: Number(host.portNo),
          path: String(host.url),
          method: 'POST',
          headers: { 'content-type': type, 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** The fields and file parts of a multipart body. */
function multipart(body: Buffer, type: string): Promise<{ fields: Record<string, string>; files: Record<string, Buffer> }> {
  return new Promise((resolve, reject) => {
    const out = { fields: {} as Record<string, string>, files: {} as Record<string, Buffer> };
    const bb = new Busboy({ headers: { 'content-type': type }, limits: { fileSize: 4 * 1024 * 1024 } });
    bb.on('field', (name: string, value: string) => (out.fields[name] = value));
    bb.on('file', (name: string, stream: BusboyFileStream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (out.files[name] = Buffer.concat(chunks)));
    });
    bb.on('finish', () => resolve(out));
    bb.on('error', reject);
    Readable.from([body]).pipe(bb);
  });
}
