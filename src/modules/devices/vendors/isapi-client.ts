/**
 * A small HTTP client for a HikVision access terminal's ISAPI (JSON form, `?format=json`). HTTP Digest
 * authentication is done by `urllib` (`digestAuth`); every request has a timeout. Each answer is sorted
 * into what the caller can act on:
 *
 * - `ok`: statusCode 1 (or a read that returned its object);
 * - `bad-input`: the device refused the data (statusCode 4/6: badParameters, invalid content, card or
 *   employee number problems, face picture quality or size);
 * - `capacity`: a user, card or face library is full;
 * - `auth`: still 401 after the digest exchange (wrong username or password);
 * - `temporary`: 5xx, device busy, timeouts, connection refused or reset (`offline` set for those).
 */
import './undici-global.js'; // before urllib: keeps Node's own fetch dispatcher process-wide
import { Agent, request, type HttpClientResponse } from 'urllib';

/** The ISAPI requests' own connection pool (never the process-wide fetch dispatcher). */
const agent = new Agent({ keepAliveTimeout: 4000 });

export type IsapiOutcome<T> =
  | { kind: 'ok'; body: T }
  | { kind: 'bad-input' | 'capacity' | 'auth' | 'temporary'; message: string; subStatusCode?: string; offline?: boolean };

/** The device's answer to a write (ResponseStatus, JSON form). */
export interface ResponseStatus {
  statusCode?: number;
  statusString?: string;
  subStatusCode?: string;
  errorCode?: number;
  errorMsg?: string;
}

export interface IsapiUser {
  employeeNo: string;
  name?: string;
  userType?: string;
  Valid?: { enable: boolean; beginTime?: string; endTime?: string; timeType?: string };
  numOfCard?: number;
  numOfFace?: number;
}

export interface IsapiCard {
  employeeNo: string;
  cardNo: string;
  cardType?: string;
}

export interface IsapiConnection {
  baseUrl: string;
  username: string;
  password: string;
}

/** subStatusCodes that mean a library is full (ISAPI error list; firmware differ in spelling). */
const CAPACITY = /full|overLimit|exceed|noMemory|outOfMemory|maxNum/i;
/** subStatusCodes that mean "try again later". */
const BUSY = /busy|deviceBusy|upgrading|notReady/i;

export function classify(status: number, body: ResponseStatus | null): IsapiOutcome<never> | null {
  const sub = body?.subStatusCode ?? '';
  const detail = [body?.statusString, sub, body?.errorMsg].filter(Boolean).join(', ');
  if (status === 401) return { kind: 'auth', message: 'the device refused the username/password (HTTP 401)' };
  if (status >= 500 || BUSY.test(sub))
    return { kind: 'temporary', message: `device busy or failing (HTTP ${status}${detail ? `: ${detail}` : ''})` };
  if (body && typeof body.statusCode === 'number' && body.statusCode !== 1) {
    if (CAPACITY.test(sub)) return { kind: 'capacity', message: `device full: ${detail}`, subStatusCode: sub };
    if (body.statusCode === 2 || body.statusCode === 3)
      return { kind: 'temporary', message: `device not ready: ${detail}`, subStatusCode: sub };
    return { kind: 'bad-input', message: `device refused: ${detail}`, subStatusCode: sub };
  }
  if (status >= 400)
    return { kind: 'bad-input', message: `device refused (HTTP ${status}${detail ? `: ${detail}` : ''})`, subStatusCode: sub };
  return null;
}

const NETWORK = /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|SocketError|other side closed/i;

export class IsapiClient {
  constructor(
    private readonly conn: IsapiConnection,
    private readonly timeoutMs = 5000,
  ) {}

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    multipart?: { content: Buffer; type: string },
  ): Promise<IsapiOutcome<T>> {
    const url = `${this.conn.baseUrl.replace(/\/+$/, '')}${path}${path.includes('?') ? '&' : '?'}format=json`;
    let res: HttpClientResponse<Buffer>;
    try {
      res = await request<Buffer>(url, {
        method,
        dispatcher: agent,
        digestAuth: `${this.conn.username}:${this.conn.password}`,
        timeout: this.timeoutMs,
        dataType: 'buffer',
        retry: 0,
        socketErrorRetry: 0,
        ...(multipart
          ? { content: multipart.content, headers: { 'content-type': multipart.type } }
          : body !== undefined
            ? { content: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
            : {}),
      });
    } catch (err) {
      const text = err instanceof Error ? `${err.name} ${(err as { code?: string }).code ?? ''} ${err.message}` : String(err);
      if (/timeout/i.test(text)) return { kind: 'temporary', message: 'the device did not answer in time', offline: true };
      if (NETWORK.test(text)) return { kind: 'temporary', message: 'the device is unreachable', offline: true };
      return { kind: 'temporary', message: 'request to the device failed', offline: true };
    }
    let parsed: unknown;
    try {
      parsed = res.data.length ? JSON.parse(res.data.toString('utf8')) : null;
    } catch {
      parsed = null;
    }
    const failure = classify(res.status, parsed as ResponseStatus | null);
    if (failure) return failure;
    return { kind: 'ok', body: parsed as T };
  }

  capabilities(): Promise<IsapiOutcome<{ UserInfo?: { maxRecordNum?: number } }>> {
    return this.call('GET', '/ISAPI/AccessControl/UserInfo/capabilities');
  }

  count(): Promise<IsapiOutcome<{ UserInfoCount?: { userNumber?: number } }>> {
    return this.call('GET', '/ISAPI/AccessControl/UserInfo/Count');
  }

  addUser(user: IsapiUser): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('POST', '/ISAPI/AccessControl/UserInfo/Record', { UserInfo: user });
  }

  modifyUser(user: IsapiUser): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('PUT', '/ISAPI/AccessControl/UserInfo/Modify', { UserInfo: user });
  }

  deleteUser(employeeNo: string): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('PUT', '/ISAPI/AccessControl/UserInfo/Delete', { UserInfoDelCond: { EmployeeNoList: [{ employeeNo }] } });
  }

  /** One page of users (all, or those with these employee numbers). */
  searchUsers(
    position: number,
    maxResults: number,
    employeeNos?: string[],
  ): Promise<
    IsapiOutcome<{ UserInfoSearch?: { responseStatusStrg?: string; numOfMatches?: number; totalMatches?: number; UserInfo?: IsapiUser[] } }>
  > {
    return this.call('POST', '/ISAPI/AccessControl/UserInfo/Search', {
      UserInfoSearchCond: {
        searchID: `s${position}`,
        searchResultPosition: position,
        maxResults,
        ...(employeeNos ? { EmployeeNoList: employeeNos.map((employeeNo) => ({ employeeNo })) } : {}),
      },
    });
  }

  addCard(card: IsapiCard): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('POST', '/ISAPI/AccessControl/CardInfo/Record', { CardInfo: card });
  }

  deleteCards(cardNos: string[]): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('PUT', '/ISAPI/AccessControl/CardInfo/Delete', {
      CardInfoDelCond: { CardNoList: cardNos.map((cardNo) => ({ cardNo })) },
    });
  }

  /** Every card of one user (paged). */
  async cardsOf(employeeNo: string): Promise<IsapiOutcome<IsapiCard[]>> {
    const cards: IsapiCard[] = [];
    for (let position = 0; ;) {
      const page = await this.call<{ CardInfoSearch?: { responseStatusStrg?: string; numOfMatches?: number; CardInfo?: IsapiCard[] } }>(
        'POST',
        '/ISAPI/AccessControl/CardInfo/Search',
        {
          CardInfoSearchCond: {
            searchID: `c${employeeNo}${position}`,
            searchResultPosition: position,
            maxResults: 30,
            EmployeeNoList: [{ employeeNo }],
          },
        },
      );
      if (page.kind !== 'ok') return page;
      const found = page.body?.CardInfoSearch?.CardInfo ?? [];
      cards.push(...found.filter((c) => c.employeeNo === employeeNo));
      position += found.length;
      if (page.body?.CardInfoSearch?.responseStatusStrg !== 'MORE' || !found.length) return { kind: 'ok', body: cards };
    }
  }

  /** Uploads a face to the face library (FDLib "1", blackFD) under FPID = employeeNo; an existing face is replaced. */
  uploadFace(employeeNo: string, jpeg: Buffer): Promise<IsapiOutcome<ResponseStatus>> {
    const boundary = `----isapi${employeeNo}${jpeg.length}`;
    const record = JSON.stringify({ faceLibType: 'blackFD', FDID: '1', FPID: employeeNo });
    const content = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="FaceDataRecord"\r\nContent-Type: application/json\r\n\r\n${record}\r\n`,
      ),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="img"; filename="face.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      jpeg,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return this.call('POST', '/ISAPI/Intelligent/FDLib/FaceDataRecord', undefined, {
      content,
      type: `multipart/form-data; boundary=${boundary}`,
    });
  }

  /** Whether the face library holds a face for this employeeNo. */
  async hasFace(employeeNo: string): Promise<IsapiOutcome<boolean>> {
    const res = await this.call<{ numOfMatches?: number; MatchList?: { FPID?: string }[] }>('POST', '/ISAPI/Intelligent/FDLib/FDSearch', {
      searchResultPosition: 0,
      maxResults: 1,
      faceLibType: 'blackFD',
      FDID: '1',
      FPID: employeeNo,
    });
    if (res.kind !== 'ok') return res;
    return { kind: 'ok', body: (res.body?.MatchList ?? []).some((m) => m.FPID === employeeNo) };
  }

  deleteFace(employeeNo: string): Promise<IsapiOutcome<ResponseStatus>> {
    return this.call('PUT', '/ISAPI/Intelligent/FDLib/FDSearch/Delete?FDID=1&faceLibType=blackFD', { FPID: [{ value: employeeNo }] });
  }

  /** Points HTTP host notification 1 at `url` (JSON events). */
  registerHost(url: string): Promise<IsapiOutcome<ResponseStatus>> {
    const u = new URL(url);
    const https = u.protocol === 'https:';
    return this.call('PUT', '/ISAPI/Event/notification/httpHosts', {
      HttpHostNotificationList: [
        {
          HttpHostNotification: {
            id: '1',
            url: `${u.pathname}${u.search}`,
            protocolType: https ? 'HTTPS' : 'HTTP',
            parameterFormatType: 'JSON',
            addressingFormatType: /^[\d.]+$/.test(u.hostname) ? 'ipaddress' : 'hostname',
            ...(/^[\d.]+$/.test(u.hostname) ? { ipAddress: u.hostname } : { hostName: u.hostname }),
            portNo: Number(u.port || (https ? 443 : 80)),
            httpAuthenticationMethod: 'none',
          },
        },
      ],
    });
  }
}
