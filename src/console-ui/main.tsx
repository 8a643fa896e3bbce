/** The operator console: sign-in, the shell (header, navigation, language), the router and the shared site data. */
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, checkSession, get, setSignedOutHandler, signOut, type Site } from './api.js';
import { I18n, translator, useI18n, type Key, type Lang } from './i18n.js';
import { Live, LiveFeed } from './live.js';
import { SiteData, type SiteContext } from './site.js';
import { ErrorBox, Loading, Show, useLoad } from './ui.js';
import { SignIn } from './screens/sign-in.js';
import { FloorPlan } from './screens/floor-plan.js';
import { DayView } from './screens/day-view.js';
import { BookingDetail } from './screens/booking-detail.js';
import { Bookings } from './screens/bookings.js';
import { Webhooks } from './screens/webhooks.js';
import { DevicesVisitors } from './screens/devices-visitors.js';
import { Sandbox } from './screens/sandbox.js';

export interface Route {
  name: 'floor' | 'day' | 'booking' | 'bookings' | 'analytics' | 'webhooks' | 'devices' | 'sandbox';
  parts: string[];
  query: URLSearchParams;
}

function parseHash(hash: string): Route {
  const [path = '', qs = ''] = hash.replace(/^#\/?/, '').split('?');
  const [name = 'floor', ...parts] = path.split('/').filter(Boolean).map(decodeURIComponent);
  const known: Route['name'][] = ['floor', 'day', 'booking', 'bookings', 'analytics', 'webhooks', 'devices', 'sandbox'];
  return { name: (known as string[]).includes(name) ? (name as Route['name']) : 'floor', parts, query: new URLSearchParams(qs) };
}

function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return useMemo(() => parseHash(hash), [hash]);
}

const NAV: { name: Route['name']; key: Key; href: string }[] = [
  { name: 'floor', key: 'navFloor', href: '#/floor' },
  { name: 'day', key: 'navDay', href: '#/day' },
  { name: 'bookings', key: 'navBookings', href: '#/bookings' },
  { name: 'analytics', key: 'navAnalytics', href: '#/analytics' },
  { name: 'webhooks', key: 'navWebhooks', href: '#/webhooks' },
  { name: 'devices', key: 'navDevices', href: '#/devices' },
  { name: 'sandbox', key: 'navSandbox', href: '#/sandbox' },
];

function initialLang(): Lang {
  const q = new URLSearchParams(location.search).get('lang');
  if (q === 'th' || q === 'en') return q;
  const saved = localStorage.getItem('console.lang');
  if (saved === 'th' || saved === 'en') return saved;
  return navigator.language?.toLowerCase().startsWith('th') ? 'th' : 'en';
}

function LanguageSwitch() {
  const { lang, setLang, t } = useI18n();
  return (
    <div class="lang" role="group" aria-label={t('language')}>
      <button type="button" class="lang-btn" lang="en" aria-pressed={lang === 'en'} onClick={() => setLang('en')}>
        English
      </button>
      <button type="button" class="lang-btn" lang="th" aria-pressed={lang === 'th'} onClick={() => setLang('th')}>
        ภาษาไทย
      </button>
    </div>
  );
}

function LiveStatus({ feed }: { feed: LiveFeed }) {
  const { t } = useI18n();
  const [connected, setConnected] = useState(feed.connected);
  useEffect(() => feed.onStatus(setConnected), [feed]);
  return (
    <span class={`live ${connected ? 'on' : 'off'}`} role="status">
      <span aria-hidden="true" class="dot" />
      {connected ? t('live') : t('reconnecting')}
    </span>
  );
}

/**
 * The tabs. On a narrow screen they scroll sideways: a fading edge with an arrow
 * shows on the side where more tabs are (classes more-start / more-end, kept up
 * to date on scroll and resize), and the current tab is scrolled into view.
 */
function TabBar({ items, active }: { items: typeof NAV; active: Route['name'] }) {
  const { t, lang } = useI18n();
  const list = useRef<HTMLUListElement>(null);
  const [more, setMore] = useState({ start: false, end: false });
  const measure = () => {
    const ul = list.current;
    if (!ul) return;
    const start = ul.scrollLeft > 1;
    const end = ul.scrollLeft + ul.clientWidth < ul.scrollWidth - 1;
    setMore((m) => (m.start === start && m.end === end ? m : { start, end }));
  };
  useEffect(() => {
    const ul = list.current;
    if (!ul) return;
    const observer = new ResizeObserver(measure);
    observer.observe(ul);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    const ul = list.current;
    const current = ul?.querySelector<HTMLElement>('a[aria-current="page"]');
    if (ul && current) {
      // Only the tab strip scrolls (not the page): the tab is brought fully in view, clear of the fading edges.
      const edge = 40;
      const left = current.offsetLeft; // the list is the link's offset parent: content coordinates, scroll ignored
      const right = left + current.offsetWidth;
      if (left - edge < ul.scrollLeft) ul.scrollLeft = Math.max(0, left - edge);
      else if (right + edge > ul.scrollLeft + ul.clientWidth) ul.scrollLeft = right + edge - ul.clientWidth;
    }
    measure();
  }, [active, lang, items.length]);
  return (
    <nav class={`nav${more.start ? ' more-start' : ''}${more.end ? ' more-end' : ''}`} aria-label={t('appName')}>
      <ul ref={list} onScroll={measure}>
        {items.map((n) => (
          <li key={n.name}>
            <a href={n.href} aria-current={active === n.name ? 'page' : undefined}>
              {t(n.key)}
            </a>
          </li>
        ))}
      </ul>
      <span class="nav-fade start" aria-hidden="true">
        ‹
      </span>
      <span class="nav-fade end" aria-hidden="true">
        ›
      </span>
    </nav>
  );
}

/** The analytics screen and its chart library (uPlot) load on the first visit, as a chunk of their own: the first load stays small. */
function AnalyticsScreen({ query }: { query: URLSearchParams }) {
  const screen = useLoad(() => import('./screens/analytics.js'), []);
  return <Show value={screen}>{({ Analytics }) => <Analytics query={query} />}</Show>;
}

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'day':
      return <DayView assetId={route.parts[0]} date={route.parts[1]} />;
    case 'booking':
      return <BookingDetail key={route.parts[0]} id={route.parts[0] ?? ''} />;
    case 'bookings':
      return <Bookings query={route.query} />;
    case 'analytics':
      return <AnalyticsScreen query={route.query} />;
    case 'webhooks':
      return <Webhooks listenerId={route.parts[0]} />;
    case 'devices':
      return <DevicesVisitors />;
    case 'sandbox':
      return <Sandbox />;
    default:
      return <FloorPlan floorId={route.parts[0]} projectId={route.query.get('project') ?? undefined} />;
  }
}

function Console({ onSignOut }: { onSignOut: () => void }) {
  const { t } = useI18n();
  const route = useRoute();
  const feed = useMemo(() => new LiveFeed(), []);
  const [site, setSite] = useState<{ data?: Site; error?: unknown }>({});
  const [sandbox, setSandbox] = useState(false);
  const loadSite = () => {
    setSite({});
    get<Site>('/ops/v1/site').then(
      (data) => setSite({ data }),
      (error) => setSite({ error }),
    );
  };
  useEffect(() => {
    loadSite();
    get('/ops/v1/clock').then(
      () => setSandbox(true),
      () => setSandbox(false),
    );
    feed.start();
    return () => feed.stop();
  }, []);
  const ctx: SiteContext | null = site.data ? { site: site.data, sandbox, reload: loadSite } : null;
  const nav = NAV.filter((n) => n.name !== 'sandbox' || sandbox);
  const active = route.name === 'booking' ? 'bookings' : route.name;
  return (
    <Live.Provider value={feed}>
      <a class="skip" href="#main">
        {t('skip')}
      </a>
      <header class="top">
        <div class="brand">
          <span class="logo" aria-hidden="true">
            ▦
          </span>
          <span>{t('appName')}</span>
        </div>
        <LiveStatus feed={feed} />
        <LanguageSwitch />
        <button type="button" class="btn subtle" onClick={() => void signOut().finally(onSignOut)}>
          {t('signOut')}
        </button>
      </header>
      <TabBar items={nav} active={active} />
      <main id="main" tabIndex={-1}>
        {site.error ? (
          <ErrorBox error={site.error} onRetry={loadSite} />
        ) : ctx ? (
          <SiteData.Provider value={ctx}>
            <Screen route={route} />
          </SiteData.Provider>
        ) : (
          <Loading />
        )}
      </main>
    </Live.Provider>
  );
}

function App() {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const [session, setSession] = useState<'unknown' | 'in' | 'out'>('unknown');
  const t = useMemo(() => translator(lang), [lang]);
  const setLang = (l: Lang) => {
    localStorage.setItem('console.lang', l);
    setLangState(l);
  };
  useEffect(() => {
    document.documentElement.lang = lang;
    document.title = t('appName');
  }, [lang]);
  useEffect(() => {
    setSignedOutHandler(() => setSession('out'));
    void checkSession().then((ok) => setSession(ok ? 'in' : 'out'));
  }, []);
  return (
    <I18n.Provider value={{ lang, t, setLang }}>
      {session === 'unknown' ? (
        <Loading />
      ) : session === 'in' ? (
        <Console onSignOut={() => setSession('out')} />
      ) : (
        <SignIn onSignedIn={() => setSession('in')} header={<LanguageSwitch />} />
      )}
    </I18n.Provider>
  );
}

export { ApiError };
render(<App />, document.getElementById('app')!);
