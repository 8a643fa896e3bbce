/**
 * Example integration: book a room for a member, wait for ROOM_BOOK on our own
 * webhook receiver, check in (moving the sandbox clock to the check-in window
 * when running against a sandbox with the ops token; otherwise waiting for the
 * window), then end the booking with a check-out.
 *
 *   BOOKING_URL=http://127.0.0.1:3000 APP_ID=… APP_SECRET=… MEMBER=ext-alice PROJECT_ID=… \
 *   WEBHOOK_SECRET=… WEBHOOK_PORT=9999 [OPS_TOKEN=…] node --import tsx sdk/examples/book-and-check-in.ts
 *
 * The listener (http://<host>:WEBHOOK_PORT/hooks, events ROOM_BOOK, the secret)
 * is registered by the operator out of band (webhooks[] of the site document).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  BookingClient,
  ComeBackLaterError,
  SandboxClock,
  WebhookReceiver,
  checkInOpensAt,
  nodeWebhookHandler,
  type Meeting,
  type WebhookEvent,
} from '../src/index.js';

export interface ExampleReceiver {
  url: string;
  /** Resolves with the first event (already received or to come) that `match` accepts. */
  waitFor(match: (e: WebhookEvent) => boolean, timeoutMs?: number): Promise<WebhookEvent>;
  events: WebhookEvent[];
  close(): Promise<void>;
}

/** Our webhook endpoint: POST /hooks, verified and de-duplicated by the SDK. */
export async function startReceiver(secret: string, port = 0, host = '127.0.0.1'): Promise<ExampleReceiver> {
  const events: WebhookEvent[] = [];
  const waiters = new Set<(e: WebhookEvent) => void>();
  const receiver = new WebhookReceiver({
    secret,
    onEvent: (event) => {
      events.push(event);
      for (const w of waiters) w(event);
    },
  });
  const handle = nodeWebhookHandler(receiver);
  const server = http.createServer((req, res) => {
    if (req.url !== '/hooks') {
      res.statusCode = 404;
      res.end();
      return;
    }
    void handle(req, res);
  });
  await new Promise<void>((r) => server.listen(port, host, () => r()));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}/hooks`,
    events,
    waitFor: (match, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const seen = events.find(match);
        if (seen) return resolve(seen);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error('timed out waiting for the webhook event'));
        }, timeoutMs);
        const check = (e: WebhookEvent) => {
          if (!match(e)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(e);
        };
        waiters.add(check);
      }),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface ExampleOptions {
  baseUrl: string;
  appId: string;
  appSecret: string;
  /** The member's id in our own system (act_as subject). */
  member: string;
  projectId: string;
  receiver: ExampleReceiver;
  /** The sandbox ops token (development/uat): the clock is moved instead of waited for. */
  opsToken?: string;
  log?: (line: string) => void;
}

export interface ExampleResult {
  meeting: Meeting;
  bookEvent: WebhookEvent;
  /** Statuses the booking went through. */
  statuses: string[];
}

const MINUTE = 60_000;

export async function bookAndCheckIn(o: ExampleOptions): Promise<ExampleResult> {
  const log = o.log ?? (() => {});
  const app = new BookingClient({ baseUrl: o.baseUrl, appId: o.appId, appSecret: o.appSecret });
  const member = app.actingAs(o.member);
  const sandbox = o.opsToken ? new SandboxClock({ baseUrl: o.baseUrl, opsToken: o.opsToken }) : undefined;

  // A 30-minute slot starting on the next quarter hour at least 30 minutes from now (the service's now in a sandbox).
  const now = sandbox ? await sandbox.now() : Date.now();
  const start = Math.ceil((now + 30 * MINUTE) / (15 * MINUTE)) * 15 * MINUTE;
  const window = { startDateTime: new Date(start).toISOString(), endDateTime: new Date(start + 30 * MINUTE).toISOString() };

  // Rooms free for the window; one without unavailableReason can be booked.
  const rooms = await member.searchRooms({ projectId: o.projectId, ...window });
  const room = rooms.find((r) => !r.unavailableReason);
  if (!room) throw new Error('no bookable room for the window');
  log(`booking ${room.name} ${window.startDateTime}`);

  // createMeeting reconciles instead of resending after a lost answer.
  const booked = await member.createMeeting({ meetingRoomId: room._id, title: 'SDK example', ...window });
  const statuses = [booked.status];

  // ROOM_BOOK carries no meeting id: match it on the room and the start.
  const bookEvent = await o.receiver.waitFor(
    (e) => e.type === 'ROOM_BOOK' && e.data.roomName === room.name && Date.parse(e.data.bookingDate) === Date.parse(booked.startDateTime),
  );
  log(`received ${bookEvent.type} ${bookEvent.id}`);

  // Check in: statuses change on their own, so re-read first; MEETING_040/041 mean come back later.
  for (let attempt = 0; ; attempt++) {
    try {
      const fresh = await member.reReadThen(booked._id, (m) => {
        if (m.status !== 'active') throw new Error(`booking is ${m.status}, cannot check in`);
        return member.checkIn(m._id);
      });
      statuses.push(fresh.status);
      break;
    } catch (err) {
      if (!(err instanceof ComeBackLaterError) || attempt >= 3) throw err;
      const opensAt = checkInOpensAt(booked, room)?.getTime() ?? err.retryAt?.getTime();
      if (sandbox) {
        const at = opensAt ?? (await sandbox.now()) + (err.minutesUntilOpen ?? 1) * MINUTE;
        log(`check-in opens ${new Date(at).toISOString()}: moving the sandbox clock`);
        await sandbox.set(new Date(Math.max(at, await sandbox.now())));
      } else {
        const wait = Math.max(1000, (err.retryAt?.getTime() ?? Date.now() + MINUTE) - Date.now());
        log(`check-in opens in ${Math.round(wait / 1000)} s: waiting`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  // A checked-in booking cannot be cancelled: it ends with a check-out.
  const ended = await member.reReadThen(booked._id, (m) =>
    m.status === 'checked-in' ? member.checkOut(m._id) : member.cancelMeeting(m._id),
  );
  statuses.push(ended.status);
  log(`ended: ${statuses.join(' → ')}`);
  return { meeting: ended, bookEvent, statuses };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = (name: string) => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is required`);
    return v;
  };
  const receiver = await startReceiver(
    env('WEBHOOK_SECRET'),
    Number(process.env.WEBHOOK_PORT ?? 9999),
    process.env.WEBHOOK_HOST ?? '127.0.0.1',
  );
  try {
    await bookAndCheckIn({
      baseUrl: env('BOOKING_URL'),
      appId: env('APP_ID'),
      appSecret: env('APP_SECRET'),
      member: env('MEMBER'),
      projectId: env('PROJECT_ID'),
      receiver,
      opsToken: process.env.OPS_TOKEN,
      log: console.log,
    });
  } finally {
    await receiver.close();
  }
}
