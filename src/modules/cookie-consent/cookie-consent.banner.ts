import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { etagOf } from '../../shared/http-cache.js';
import { BANNER_CSS_FILE } from './cookie-consent.settings.js';

/**
 * The banner a site embeds (decisions CC3): vanilla-cookieconsent 3 (MIT, `node_modules`) followed
 * by Cairn's loader, which finds its base URL and site key in its own `src`, links the CSS, reads
 * the config, maps it to `CookieConsent.run()` and posts each choice. The library inserts texts as
 * HTML, so the loader escapes every one; style values reach the page only through
 * `style.setProperty`, never as CSS text. Site authors gate their own tags with
 * `type="text/plain" data-category="<key>"` (the library's `manageScriptTags`).
 */
const LOADER = String.raw`
(function () {
  'use strict';
  var script = document.currentScript;
  var CC = window.CookieConsent;
  if (!script || !CC) return;
  var src = new URL(script.src);
  var base = src.origin + src.pathname.replace(/banner\.js$/, '');
  var query = '?siteKey=' + encodeURIComponent(src.searchParams.get('siteKey') || '');
  var link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = base + 'banner.css' + query;
  document.head.appendChild(link);
  var lang = script.getAttribute('data-locale') || document.documentElement.lang || '';

  var ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function esc(v) {
    return String(v == null ? '' : v).replace(/[&<>"']/g, function (c) { return ESCAPES[c]; });
  }
  var POSITIONS = { bottom: 'bottom center', top: 'top center', center: 'middle center', 'bottom-left': 'bottom left', 'bottom-right': 'bottom right' };
  var LAYOUTS = { banner: 'bar', modal: 'box wide', floating: 'box' };

  function send(c) {
    var cookie = CC.getCookie();
    var body = JSON.stringify({
      consentId: cookie.consentId, categories: cookie.categories, services: cookie.services,
      revision: c.revision, locale: c.locale, pageUrl: location.href
    });
    var url = base + 'consents' + query;
    // A string beacon is text/plain: no preflight, and it survives the page being left.
    if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return;
    fetch(url, { method: 'POST', body: body, headers: { 'content-type': 'text/plain' }, keepalive: true, credentials: 'omit' }).catch(function () {});
  }

  function style(c) {
    var root = document.getElementById('cc-main');
    if (!root) return;
    var vars = {
      '--cc-btn-primary-bg': c.primaryColor, '--cc-btn-primary-border-color': c.primaryColor,
      '--cc-toggle-on-bg': c.primaryColor, '--cc-link-color': c.primaryColor,
      '--cc-modal-border-radius': c.borderRadius + 'px', '--cc-btn-border-radius': Math.min(c.borderRadius, 24) + 'px'
    };
    for (var k in c.styleOverrides) vars[k] = c.styleOverrides[k];
    for (var name in vars) root.style.setProperty(name, vars[name]);
    root.style.setProperty('font-size', c.fontSize + 'px');
    if (c.theme === 'dark' || (c.theme === 'auto' && window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches))
      document.documentElement.classList.add('cc--darkmode');
  }

  function settingsButton(c) {
    if (!c.showSettingsButton || c.mode === 'notice-only' || document.getElementById('cairn-cc-settings')) return;
    var b = document.createElement('button');
    b.id = 'cairn-cc-settings';
    b.type = 'button';
    b.textContent = c.texts.customize;
    b.setAttribute('style', 'position:fixed;left:12px;bottom:12px;z-index:2147483646;padding:6px 10px;border:0;border-radius:6px;cursor:pointer;color:#fff');
    b.style.background = c.primaryColor;
    b.addEventListener('click', function () { CC.showPreferences(); });
    document.body.appendChild(b);
  }

  function start(c) {
    var notice = c.mode === 'notice-only';
    var t = c.texts;
    var categories = {};
    var sections = t.preferencesDescription ? [{ description: esc(t.preferencesDescription) }] : [];
    c.categories.forEach(function (cat) {
      var services = {};
      c.services.forEach(function (s) { if (s.category === cat.key) services[s.key] = { label: esc(s.name) }; });
      categories[cat.key] = {
        enabled: cat.required || notice || (c.mode === 'opt-out' && cat.defaultEnabled),
        readOnly: cat.required || notice,
        services: services
      };
      sections.push({ title: esc(cat.label), description: esc(cat.description || ''), linkedCategory: cat.key });
    });
    var links = [];
    if (c.privacyPolicyUrl) links.push('<a href="' + esc(c.privacyPolicyUrl) + '" rel="noopener">Privacy policy</a>');
    if (c.cookiePolicyUrl) links.push('<a href="' + esc(c.cookiePolicyUrl) + '" rel="noopener">Cookie policy</a>');
    var rejectAll = c.showRejectAll && !notice ? esc(t.rejectAll) : undefined;
    var translation = {
      consentModal: {
        title: esc(t.title), description: esc(t.description), acceptAllBtn: esc(t.acceptAll), acceptNecessaryBtn: rejectAll,
        showPreferencesBtn: notice ? undefined : esc(t.customize), footer: links.join('')
      },
      preferencesModal: {
        title: esc(t.preferencesTitle || t.customize), acceptAllBtn: esc(t.acceptAll), acceptNecessaryBtn: esc(t.rejectAll),
        savePreferencesBtn: esc(t.save), closeIconLabel: 'Close', sections: sections
      }
    };
    var layout = LAYOUTS[c.layout] || 'bar';
    var position = layout === 'bar' ? (c.position === 'top' ? 'top' : 'bottom') : POSITIONS[c.position] || 'bottom center';
    var translations = {};
    translations[c.locale] = translation;
    CC.run({
      mode: c.mode === 'opt-in' ? 'opt-in' : 'opt-out',
      revision: c.revision,
      manageScriptTags: true,
      disablePageInteraction: c.layout === 'modal',
      guiOptions: { consentModal: { layout: layout, position: position, equalWeightButtons: true }, preferencesModal: { layout: 'box' } },
      categories: categories,
      language: { default: c.locale, translations: translations },
      onFirstConsent: function () { send(c); },
      onChange: function () { send(c); },
      onConsent: function () { settingsButton(c); }
    }).then(function () { style(c); });
    style(c);
  }

  fetch(base + 'config' + query + (lang ? '&locale=' + encodeURIComponent(lang) : ''), { credentials: 'omit' })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (body) { if (body && body.data) start(body.data); })
    .catch(function () {});
})();
`;

export interface Asset {
  body: string;
  etag: string;
}

let assets: { js: Asset; css: Asset } | null = null;

/** The script and its CSS, read once, each under a strong ETag. */
export function bannerAssets(): { js: Asset; css: Asset } {
  if (assets) return assets;
  const library = readFileSync(createRequire(import.meta.url).resolve('vanilla-cookieconsent/dist/cookieconsent.umd.js'), 'utf8');
  const js = `${library}\n${LOADER}`;
  const css = readFileSync(BANNER_CSS_FILE, 'utf8');
  assets = { js: { body: js, etag: etagOf(js) }, css: { body: css, etag: etagOf(css) } };
  return assets;
}
