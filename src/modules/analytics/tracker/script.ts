/**
 * The analytics tracker served at `/v1/public/analytics/script.js` (design analytics.md 1.2 and
 * 1.4, decisions A3 and AT1-AT5). Built by `npm run build:tracker` into `../public/script.js`;
 * budget 3,072 bytes gzip, ES2017, no cookie, no storage written.
 *
 * Events are kept per page (a batch's envelope describes one page) and sent: a pageview at once,
 * the rest 10 s after the first waits, at 20 waiting, or on hide with `sendBeacon`.
 */

interface TrackerEvent {
  t: string;
  pv?: string;
  at?: number;
  [field: string]: unknown;
}

/** One page shown: its URL, the page before it and the events waiting to be sent for it. */
interface Page {
  u: string;
  r: string;
  pv: string;
  e: TrackerEvent[];
}

interface PendingClick {
  ev: TrackerEvent;
  at: number;
  live?: boolean;
}

type Cairn = ((command: string, ...args: unknown[]) => void) & { q?: ArrayLike<unknown>[] };

declare global {
  interface Window {
    cairn?: Cairn;
    cairnConsent?: boolean;
  }
}

((w: Window, d: Document) => {
  const script = d.currentScript as HTMLScriptElement | null;
  const attr = (name: string) => script?.getAttribute(`data-${name}`);
  const key = attr('site-key');
  let ignored = false;
  try {
    ignored = localStorage.getItem('cairn_ignore') === 'true';
  } catch (_) {
    // Storage blocked (sandboxed frame, privacy settings): nobody opted out.
  }
  if (!key || !script || ignored) return;

  const api = (attr('api') || new URL(script.src).origin).replace(/\/$/, '');
  const hashMode = attr('hash') != null;
  const needsConsent = attr('require-consent') != null;
  const trackClicks = attr('clicks') !== 'off';
  const location = w.location;
  const now = Date.now;
  const on = (target: EventTarget, type: string, fn: (e: any) => void, capture?: boolean) =>
    target.addEventListener(type, fn, capture ? { capture: true, passive: true } : { passive: true });
  const newId = () => (now().toString(36) + Math.random().toString(36).slice(2)).slice(0, 16);
  const pageKey = () => location.pathname + (hashMode ? location.hash : '');

  let consented = false;
  let page: Page = { u: '', r: d.referrer, pv: '', e: [] };
  /** The pageview of the document's load (or bfcache restore): Web Vitals belong to it. */
  let loadPage = page;
  let lastKey = '';
  let waiting: Page[] = [];
  let timer = 0;

  const allowed = () => !needsConsent || consented || w.cairnConsent === true;

  function send(body: string, beacon?: boolean) {
    const url = `${api}/v1/public/analytics/events?siteKey=${encodeURIComponent(key!)}`;
    if (!(beacon && navigator.sendBeacon?.(url, body))) {
      fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => {});
    }
  }

  function flush(beacon?: boolean) {
    clearTimeout(timer);
    timer = 0;
    if (!allowed()) return;
    for (const p of waiting) {
      while (p.e.length) {
        send(
          JSON.stringify({
            v: 1,
            u: p.u,
            r: p.r || undefined,
            h: hashMode ? 1 : undefined,
            sw: screen.width,
            sh: screen.height,
            lang: navigator.language,
            sentAt: now(),
            events: p.e.splice(0, 50),
          }),
          beacon,
        );
      }
    }
    waiting = [];
  }

  function push(ev: TrackerEvent, to: Page = page, at = now()) {
    ev.pv = to.pv;
    ev.at = at;
    // Held for consent: at most 100 events wait; the oldest go first.
    if (to.e.push(ev) > 100) to.e.shift();
    if (waiting.indexOf(to) < 0) waiting.push(to);
    const count = waiting.reduce((n, p) => n + p.e.length, 0);
    if (d.visibilityState === 'hidden') flush(true);
    else if (ev.t === 'pageview' || count >= 20) flush();
    else if (!timer) timer = w.setTimeout(flush, 1e4);
  }

  // Engaged time: visible and focused; scroll depth: the deepest point seen, in percent.
  let engaged = 0;
  let since = 0;
  let depth = 0;
  let sentDepth = 0;
  function tick() {
    const t = now();
    if (since) engaged += t - since;
    since = d.visibilityState === 'visible' && d.hasFocus() ? t : 0;
  }
  function scrolled() {
    const height = d.documentElement.scrollHeight;
    depth = Math.max(depth, height ? Math.min(100, Math.round(((w.scrollY + w.innerHeight) / height) * 100)) : 100);
  }
  function engagement() {
    tick();
    scrolled();
    if (page.pv && (engaged > 0 || depth > sentDepth)) push({ t: 'engagement', ms: Math.min(engaged, 18e5), sd: depth });
    engaged = 0;
    sentDepth = depth;
  }

  // Dead clicks (Clarity's definition): no DOM change within 2.5 s, no scroll within 0.1 s,
  // no selection change, no navigation. A click waits here until it is classified.
  let pending: PendingClick[] = [];
  function settle(click: PendingClick) {
    if (pending.indexOf(click) < 0) return;
    pending = pending.filter((c) => c !== click);
    click.ev.dead = click.live ? 0 : 1;
    push(click.ev, page, click.at);
  }
  function settleAll() {
    for (const c of pending) c.live = true;
    pending.slice().forEach(settle);
  }
  const liven = (within: number) => () => {
    for (const c of pending) if (now() - c.at <= within) c.live = true;
  };
  let observer: MutationObserver | undefined;

  /** A new pageview; its referrer is the page before it, or the document's for a load or a bfcache restore. */
  function pageview(restored?: boolean) {
    settleAll();
    engagement();
    flush();
    const previous = restored ? '' : page.u;
    // Outside hash mode the fragment is no part of the page (and may hold a token): it stays here.
    page = { u: hashMode ? location.href : location.href.split('#')[0]!, r: previous || d.referrer, pv: newId(), e: [] };
    lastKey = pageKey();
    depth = sentDepth = engaged = 0;
    tick();
    scrolled();
    push({ t: 'pageview' });
  }
  const navigated = () => {
    if (pageKey() !== lastKey) pageview();
  };

  // Rage clicks (PostHog): 3 clicks, each within 1 s and 30 px of the one before; a burst counts once.
  let burst: { x: number; y: number; at: number }[] = [];
  function onClick(e: MouseEvent) {
    const target = e.target as Element;
    if (!target?.closest) return;
    const link = target.closest('a[href]') as HTMLAnchorElement | null;
    if (link && /^https?:/.test(link.protocol)) {
      const download =
        link.hasAttribute('download') ||
        /\.(pdf|xlsx|docx|txt|rtf|csv|exe|key|pps|pptx?|7z|pkg|rar|gz|zip|avi|mov|mp4|mpeg|wmv|midi|mp3|wav|wma|dmg)$/i.test(link.pathname);
      if (download || link.host !== location.host) {
        push({ t: download ? 'download' : 'outbound', url: (download ? link.origin + link.pathname : link.href).slice(0, 1000) });
        flush();
      }
    }
    if (!trackClicks || e.button) return;
    const at = now();
    const last = burst[burst.length - 1];
    if (last && at - last.at <= 1000 && Math.hypot(e.clientX - last.x, e.clientY - last.y) <= 30) burst.push({ x: e.clientX, y: e.clientY, at });
    else burst = [{ x: e.clientX, y: e.clientY, at }];
    const el = target.closest('a,button,[data-cairn-id]') || target;
    const ev: TrackerEvent = {
      t: 'click',
      x: Math.round((e.pageX / Math.max(1, d.documentElement.scrollWidth)) * 1e4) / 1e4,
      y: Math.round(e.pageY),
      vw: w.innerWidth,
      sel: selector(el),
      rage: burst.length === 3 ? 1 : 0,
    };
    const click: PendingClick = { ev, at };
    pending.push(click);
    const selection = w.getSelection();
    // Form fields, labels and selected text are never dead.
    if (target.closest('input,select,textarea,label,[contenteditable]') || (selection && String(selection))) settleAll();
    else {
      if (!observer) {
        observer = new MutationObserver(liven(2500));
        observer.observe(d, { childList: true, subtree: true, attributes: true, characterData: true });
      }
      setTimeout(() => settle(click), 2500);
    }
  }

  /** `data-cairn-id`, else `#id`, else up to 5 levels of `tag.class.class:nth-of-type(n)`, at most 300 characters. */
  function selector(el: Element): string {
    const parts: string[] = [];
    for (let n = 0; el && el.nodeType === 1 && n < 5; n++, el = el.parentElement as Element) {
      const id = el.getAttribute('data-cairn-id');
      if (id) {
        parts.unshift(`[data-cairn-id="${CSS.escape(id)}"]`);
        break;
      }
      if (el.id) {
        parts.unshift(`#${CSS.escape(el.id)}`);
        break;
      }
      const tag = el.tagName.toLowerCase();
      let part = tag;
      for (const c of Array.from(el.classList).slice(0, 2)) part += `.${CSS.escape(c)}`;
      const parent = el.parentElement;
      if (parent && tag !== 'html' && tag !== 'body') {
        const same = Array.from(parent.children).filter((s) => s.tagName === el.tagName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(el) + 1})`;
      }
      parts.unshift(part);
    }
    while (parts.join(' > ').length > 300) parts.shift();
    return parts.join(' > ');
  }

  // Forms: the first focus inside a form starts it (once a pageview), a submit submits it.
  const started: string[] = [];
  const formKey = (form: HTMLFormElement) => {
    const slug = /\/v1\/public\/forms\/([^/?#]+)\/submissions/.exec(form.getAttribute('action') || '');
    return (
      form.getAttribute('data-cairn-form') ||
      (slug && decodeURIComponent(slug[1]!)) ||
      form.id ||
      form.getAttribute('name') ||
      `form[${Array.from(d.forms).indexOf(form)}]`
    ).slice(0, 255);
  };

  function hidden() {
    settleAll();
    engagement();
    flush(true);
  }

  function start() {
    const history = w.history;
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = history[name];
      history[name] = function (this: History, ...args: Parameters<History['pushState']>) {
        original.apply(this, args);
        navigated();
      };
    }
    on(w, 'popstate', navigated);
    on(w, 'hashchange', navigated);
    on(w, 'pageshow', (e: PageTransitionEvent) => {
      if (e.persisted) {
        pageview(true);
        loadPage = page;
      }
    });
    on(w, 'pagehide', hidden);
    on(d, 'visibilitychange', () => (d.visibilityState === 'hidden' ? hidden() : tick()));
    on(w, 'focus', tick);
    on(w, 'blur', tick);
    on(w, 'scroll', () => {
      scrolled();
      liven(100)();
    });
    // Only a real selection: a click on text moves the (collapsed) caret too.
    on(d, 'selectionchange', () => String(w.getSelection()) && liven(2500)());
    on(d, 'click', onClick, true);
    on(
      d,
      'focusin',
      (e: FocusEvent) => {
        const form = (e.target as Element).closest?.('form');
        const name = form && formKey(form);
        if (name && started.indexOf(name + page.pv) < 0) {
          started.push(name + page.pv);
          push({ t: 'form_start', form: name });
        }
      },
      true,
    );
    on(
      d,
      'submit',
      (e: SubmitEvent) => {
        push({ t: 'form_submit', form: formKey(e.target as HTMLFormElement) });
        flush();
      },
      true,
    );
    const consent = () => {
      consented = true;
      flush();
    };
    on(w, 'cairn:consent', consent);
    on(d, 'cairn:consent', consent);
    setInterval(() => {
      if (d.visibilityState === 'visible') {
        engagement();
        flush();
      }
    }, 24e4);

    pageview();
    loadPage = page;

    const queued = w.cairn?.q;
    w.cairn = (command: string, ...args: unknown[]) => {
      if (command === 'goal' && args[0]) push({ t: 'goal', name: String(args[0]).slice(0, 100) });
      else if (command === 'cwv') push({ t: 'cwv', name: args[0], value: args[1] }, loadPage);
      else if (command === 'consent') consent();
    };
    if (queued) for (const call of Array.from(queued)) w.cairn(...(Array.from(call) as [string]));

    if (attr('cwv') != null) {
      const load = () => {
        const s = d.createElement('script');
        s.src = `${api}/v1/public/analytics/cwv.js`;
        d.head.appendChild(s);
      };
      if (d.readyState === 'complete') load();
      else on(w, 'load', load);
    }
  }

  // A prerendered page is counted when it is shown.
  if ((d as Document & { prerendering?: boolean }).prerendering) on(d, 'prerenderingchange', start);
  else start();
})(window, document);

export {};
