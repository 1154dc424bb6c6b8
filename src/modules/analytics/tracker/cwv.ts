/**
 * The Core Web Vitals add-on served at `/v1/public/analytics/cwv.js` (design analytics.md 1.4,
 * decision A3): web-vitals' LCP, INP, CLS, FCP and TTFB, and FID from a `first-input` observer of
 * its own (web-vitals dropped `onFID` in v5). Each value goes to the tracker (`script.js`) as a
 * `cwv` event of the pageview the document was loaded with; budget 4,096 bytes gzip.
 */
import { type Metric, onCLS, onFCP, onINP, onLCP, onTTFB } from 'web-vitals';

type Cairn = (command: string, ...args: unknown[]) => void;

const report = (name: string, value: number) => {
  const cairn = (window as Window & { cairn?: Cairn }).cairn;
  // Milliseconds as integers, at most the collector's 60,000 (a minute-long LCP still counts as poor);
  // CLS is unitless, kept to 4 decimals.
  if (cairn) cairn('cwv', name, name === 'CLS' ? Math.round(value * 1e4) / 1e4 : Math.min(60_000, Math.round(value)));
};
const metric = (m: Metric) => report(m.name, m.value);

onLCP(metric);
onINP(metric);
onCLS(metric);
onFCP(metric);
onTTFB(metric);

try {
  const observer = new PerformanceObserver((list) => {
    const first = list.getEntries()[0] as PerformanceEventTiming | undefined;
    if (first) {
      observer.disconnect();
      report('FID', first.processingStart - first.startTime);
    }
  });
  observer.observe({ type: 'first-input', buffered: true });
} catch (_) {
  // No first-input timing in this browser: no FID.
}
