/**
 * A ZKTeco access terminal in PUSH (ADMS) mode, for tests and people: it polls the service, handshakes,
 * runs the commands it fetches (checking their text strictly: an unknown key or a bad time answers
 * Return=-1), keeps a user table (PIN, cards, validity window, face photo), answers inventory queries
 * through /iclock/querydata uploads, and uploads access logs (rtlog).
 */
import { decodeZkTime, formatLocalTime, parseCommand, type ParsedCommand } from '../../src/modules/devices/rules/zkteco-protocol.js';

export interface ZkUser {
  pin: string;
  cardNo: string;
  cards: string[];
  startTime: number;
  endTime: number;
  face: boolean;
  authorized: boolean;
}

export interface ZktecoTerminalOptions {
  serverUrl: string;
  serialNumber: string;
  pollMs?: number;
  /** The terminal's clock zone (its log times are local). */
  timeZone?: string;
  commKey?: string;
  /** Rows per querydata upload (a user list comes in packs: packcnt/packidx). */
  pageRows?: number;
}

const USER_KEYS = ['CardNo', 'Pin', 'Password', 'Group', 'StartTime', 'EndTime', 'Name', 'Privilege'];
const PARAM_ERROR = -1;
/** The terminal keeps decimal card numbers as numbers: read back without leading zeros. */
const asNumber = (c: string) => (/^[0-9]+$/.test(c) ? String(BigInt(c)) : c);

export class ZktecoTerminal {
  private readonly table = new Map<string, ZkUser>();
  private timer: NodeJS.Timeout | null = null;
  private offline = false;
  private handshaken = false;
  private busy = false;
  private logIndex = 0;
  /** Every status a request answered (404 for an unknown serial). */
  readonly statuses: number[] = [];
  /** Every command line received. */
  readonly received: string[] = [];

  constructor(private readonly o: ZktecoTerminalOptions) {}

  private get tz() {
    return this.o.timeZone ?? 'Asia/Bangkok';
  }

  private url(path: string, extra: Record<string, string | number> = {}) {
    const q = new URLSearchParams({
      SN: this.o.serialNumber,
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])),
    });
    return `${this.o.serverUrl.replace(/\/+$/, '')}/iclock/${path}?${q}`;
  }

  private async http(method: 'GET' | 'POST', url: string, body?: string): Promise<{ status: number; text: string }> {
    const res = await fetch(url, { method, body, headers: body === undefined ? {} : { 'content-type': 'text/plain' } });
    const text = await res.text();
    this.statuses.push(res.status);
    return { status: res.status, text };
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.pollOnce().catch(() => undefined), this.o.pollMs ?? 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops (true) or resumes (false) polling. */
  setOffline(offline: boolean): void {
    this.offline = offline;
  }

  /** The terminal lost its memory: no users, and it handshakes again. */
  restartEmpty(): void {
    this.table.clear();
    this.handshaken = false;
  }

  /** Users deleted at the terminal itself (no restart, so no handshake: only a reconcile finds out). */
  wipeUsers(): void {
    this.table.clear();
  }

  users(): ZkUser[] {
    return [...this.table.values()].map((u) => ({ ...u, cards: [...u.cards] }));
  }

  /** One poll: handshake when needed, fetch commands, run them, report results. */
  async pollOnce(): Promise<void> {
    if (this.offline || this.busy) return;
    this.busy = true;
    try {
      if (!this.handshaken) {
        const extra: Record<string, string> = { options: 'all', pushver: '3.1.2', language: '83' };
        if (this.o.commKey) extra.pushcommkey = this.o.commKey;
        const hs = await this.http('GET', this.url('cdata', extra));
        if (hs.status !== 200) return;
        this.handshaken = true;
      }
      const req = await this.http('GET', this.url('getrequest'));
      if (req.status !== 200 || req.text.trim() === 'OK') return;
      const results: string[] = [];
      for (const line of req.text.split(/\r?\n/).filter((l) => l.trim())) {
        this.received.push(line);
        const cmd = parseCommand(line);
        if (!cmd) continue;
        const code = await this.run(cmd);
        results.push(`ID=${cmd.id}&Return=${code}&CMD=${cmd.verb}`);
      }
      if (results.length) await this.http('POST', this.url('devicecmd'), results.join('\n'));
    } finally {
      this.busy = false;
    }
  }

  private async run(cmd: ParsedCommand): Promise<number> {
    if (cmd.verb !== 'DATA') return -1002;
    if (cmd.action === 'QUERY') return this.query(cmd);
    const f = cmd.fields;
    const pin = f.Pin ?? f.PIN ?? '';
    if (!/^[1-9][0-9]*$/.test(pin)) return PARAM_ERROR;
    const key = `${cmd.action} ${cmd.table}`;
    switch (key) {
      case 'UPDATE user':
        return this.updateUser(cmd, pin);
      case 'DELETE user':
        return this.strict(cmd, ['Pin']) ?? (this.table.delete(pin), 0);
      case 'UPDATE userauthorize':
        return this.strict(cmd, ['Pin', 'AuthorizeTimezoneId', 'AuthorizeDoorId']) ?? this.withUser(pin, (u) => (u.authorized = true));
      case 'DELETE userauthorize':
        return this.strict(cmd, ['Pin']) ?? this.withUser(pin, (u) => (u.authorized = false), true);
      case 'DELETE mulcarduser':
        return this.strict(cmd, ['Pin']) ?? this.withUser(pin, (u) => (u.cards = []), true);
      case 'UPDATE mulcarduser':
        if (!/^[0-9A-Za-z]+$/.test(f.CardNo ?? '')) return PARAM_ERROR;
        return this.strict(cmd, ['Pin', 'CardNo', 'LossCardFlag', 'CardType']) ?? this.withUser(pin, (u) => u.cards.push(f.CardNo!));
      case 'UPDATE biophoto': {
        const bad = this.strict(cmd, ['PIN', 'Type', 'No', 'Index', 'Format', 'Size', 'Content']);
        if (bad !== undefined) return bad;
        if (f.Type !== '9' || !/^[A-Za-z0-9+/=]+$/.test(f.Content ?? '')) return PARAM_ERROR;
        if (Number(f.Size) !== f.Content!.length) return -2;
        return this.withUser(pin, (u) => (u.face = true));
      }
      case 'DELETE biophoto':
        return this.strict(cmd, ['PIN', 'Type']) ?? this.withUser(pin, (u) => (u.face = false), true);
      default:
        return -1002;
    }
  }

  /** PARAM_ERROR unless the fields are exactly `keys`, in that order; undefined when they are. */
  private strict(cmd: ParsedCommand, keys: string[]): number | undefined {
    return cmd.keys.length === keys.length && cmd.keys.every((k, i) => k === keys[i]) ? undefined : PARAM_ERROR;
  }

  private withUser(pin: string, change: (u: ZkUser) => void, missingOk = false): number {
    const u = this.table.get(pin);
    if (!u) return missingOk ? 0 : -10;
    change(u);
    return 0;
  }

  private updateUser(cmd: ParsedCommand, pin: string): number {
    const bad = this.strict(cmd, USER_KEYS);
    if (bad !== undefined) return bad;
    const f = cmd.fields;
    const times = [f.StartTime, f.EndTime].map((t) => (t && /^[0-9]+$/.test(t) ? Number(t) : NaN));
    if (times.some((t) => Number.isNaN(t) || (t !== 0 && decodeZkTime(t, this.tz) === null))) return PARAM_ERROR;
    if (!/^[0-9A-Za-z]*$/.test(f.CardNo ?? '')) return PARAM_ERROR;
    const had = this.table.get(pin);
    this.table.set(pin, {
      pin,
      cardNo: f.CardNo ?? '',
      cards: had?.cards ?? [],
      startTime: times[0]!,
      endTime: times[1]!,
      face: had?.face ?? false,
      authorized: had?.authorized ?? false,
    });
    return 0;
  }

  /** `DATA QUERY tablename=…`: the rows go up through querydata; Return is the row count. */
  private async query(cmd: ParsedCommand): Promise<number> {
    const table = cmd.fields.tablename ?? '';
    const users = [...this.table.values()];
    const rows =
      table === 'user'
        ? users.map(
            (u) =>
              `user uid=${u.pin}\tcardno=${asNumber(u.cardNo)}\tpin=${u.pin}\tpassword=\tgroup=0\tstarttime=${u.startTime}\tendtime=${u.endTime}\tname=\tprivilege=0`,
          )
        : table === 'mulcarduser'
          ? users.flatMap((u) => u.cards.map((c) => `mulcarduser pin=${u.pin}\tcardno=${asNumber(c)}\tlosscardflag=0\tcardtype=1`))
          : table === 'biophoto'
            ? users.filter((u) => u.face).map((u) => `biophoto pin=${u.pin}\tfilename=${u.pin}.jpg\ttype=9\tsize=0`)
            : null;
    if (rows === null) return -1002;
    if (!rows.length) return 0;
    const pack = Math.max(1, this.o.pageRows ?? 1);
    const packcnt = Math.ceil(rows.length / pack);
    for (let i = 0; i < packcnt; i++) {
      await this.http(
        'POST',
        this.url('querydata', { type: 'tabledata', cmdid: cmd.id, tablename: table, count: rows.length, packcnt, packidx: i + 1 }),
        rows.slice(i * pack, (i + 1) * pack).join('\n'),
      );
    }
    return rows.length;
  }

  /** A person at the door: an rtlog line uploaded now (also returns the line, to upload it again). */
  async emitAccess(e: { pin?: string; cardNo?: string; granted: boolean; verifyType: number; at?: number }): Promise<string> {
    this.logIndex++;
    const line = [
      `time=${formatLocalTime(e.at ?? Date.now(), this.tz)}`,
      `pin=${e.pin ?? 0}`,
      `cardno=${e.cardNo ?? 0}`,
      'eventaddr=1',
      `event=${e.granted ? 0 : 23}`,
      'inoutstatus=0',
      `verifytype=${e.verifyType}`,
      `index=${this.logIndex}`,
    ].join('\t');
    await this.uploadLog(line);
    return line;
  }

  /** Uploads rtlog lines as they are (a resend). */
  async uploadLog(...lines: string[]): Promise<{ status: number; text: string }> {
    return this.http('POST', this.url('cdata', { table: 'rtlog', Stamp: this.logIndex }), lines.join('\n'));
  }
}
