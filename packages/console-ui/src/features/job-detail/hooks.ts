/** Small hooks of the job detail page: an element's width, a clock, time-axis labels. */
import { useEffect, useLayoutEffect, useMemo, useState, type RefObject } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import type { TimeTick } from './timeline';

/** The element's width in px, kept up to date (`fallback` before it is measured). */
export function useWidth(ref: RefObject<HTMLElement | null>, fallback = 1000): number {
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return undefined;
    const measure = () => setWidth(element.clientWidth || fallback);
    measure();
    if (typeof ResizeObserver !== 'undefined') {
      const observer = new ResizeObserver(measure);
      observer.observe(element);
      return () => observer.disconnect();
    }
    window.addEventListener('resize', measure);
    return () => window.removeEventListener('resize', measure);
  }, [ref, fallback]);
  return width;
}

/** The time now, advancing every `everyMs` while `ticking` (a run in progress grows on screen). */
export function useNow(ticking: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (!ticking) return undefined;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [ticking, everyMs]);
  return now;
}

/** Labels of time-axis ticks in the browser's zone: the time (to the second for short steps), and the date where it changes. */
export function useTickLabels(): (tick: TimeTick) => { time: string; date: string | undefined } {
  const { locale } = useI18n();
  return useMemo(() => {
    const seconds = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    const minutes = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const day = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric' });
    return (tick) => {
      if (tick.step >= 86_400_000) return { time: day.format(tick.at), date: undefined };
      const time = (tick.step < 60_000 ? seconds : minutes).format(tick.at);
      return { time, date: tick.showDate ? day.format(tick.at) : undefined };
    };
  }, [locale]);
}
