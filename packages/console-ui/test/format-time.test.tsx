// How instants are shown: a 24-hour clock in English as in Chinese, the short month and day, the
// year only when it is not the current one (in the zone shown), the zone's name when one is given.
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { I18nProvider, useI18n } from '../src/i18n/I18nProvider';
import { createTimeFormatter } from '../src/i18n/time';

const NOW = Date.UTC(2026, 10, 23, 12);
const EVENING = Date.UTC(2026, 10, 23, 21, 33, 15);
const LAST_YEAR = Date.UTC(2025, 11, 31, 23, 59, 59);

describe('formatTime', () => {
  it('uses a 24-hour clock in English and leaves out the current year', () => {
    const format = createTimeFormatter('en');
    expect(format(EVENING, 'UTC', NOW)).toBe('Nov 23, 21:33:15 UTC');
    expect(format(Date.UTC(2026, 10, 23, 0, 5, 0), 'UTC', NOW)).toBe('Nov 23, 00:05:00 UTC');
  });

  it('shows the year when it is not the current one', () => {
    expect(createTimeFormatter('en')(LAST_YEAR, 'UTC', NOW)).toBe('Dec 31, 2025, 23:59:59 UTC');
    expect(createTimeFormatter('zh-CN')(LAST_YEAR, 'UTC', NOW)).toBe('2025年12月31日 UTC 23:59:59');
  });

  it('decides "this year" in the zone shown', () => {
    // 2025-12-31 17:00 UTC is already 2026-01-01 01:00 in Shanghai.
    const now = Date.UTC(2025, 11, 31, 17);
    const newYear = Date.UTC(2025, 11, 31, 16, 30);
    expect(createTimeFormatter('en')(newYear, 'Asia/Shanghai', now)).toBe('Jan 1, 00:30:00 GMT+8');
    expect(createTimeFormatter('en')(newYear, 'UTC', now)).toBe('Dec 31, 16:30:00 UTC');
  });

  it('in Chinese, month and day with a 24-hour clock', () => {
    expect(createTimeFormatter('zh-CN')(EVENING, 'UTC', NOW)).toBe('11月23日 UTC 21:33:15');
  });

  it('is what the I18nProvider gives (browser zone, this year: no year, no zone name)', () => {
    function Show() {
      const { formatTime } = useI18n();
      return <p>{formatTime(Date.now())}</p>;
    }
    render(
      <I18nProvider locale="en">
        <Show />
      </I18nProvider>,
    );
    const text = screen.getByText(/^[A-Z][a-z]{2} \d{1,2}, \d{2}:\d{2}:\d{2}$/).textContent!;
    expect(text).not.toMatch(/AM|PM|\d{4}/);
  });
});
