// The two catalogues match: the same keys, the same {placeholders} per key, no empty message —
// a plain Node test (no React, no DOM) in the root vitest run.
import { describe, expect, it } from 'vitest';
import { CATALOGUES, LOCALES, en, initialLocale, localeFromLanguages, placeholders, translate, zhCN } from './index';

describe('the message catalogues', () => {
  it('have the same keys', () => {
    expect(Object.keys(zhCN).sort()).toEqual(Object.keys(en).sort());
  });

  it.each(LOCALES)('%s has the same placeholders as en for every key, and no empty message', (locale) => {
    const catalogue = CATALOGUES[locale];
    const mismatched = Object.keys(en).filter((key) => {
      const k = key as keyof typeof en;
      return placeholders(catalogue[k]).join(',') !== placeholders(en[k]).join(',');
    });
    expect(mismatched).toEqual([]);
    expect(Object.entries(catalogue).filter(([, message]) => message.trim() === '').map(([key]) => key)).toEqual([]);
  });

  it('zh-CN is Chinese, not English left untranslated', () => {
    // Keys whose text is the same in both languages by nature (names, symbols).
    const same = new Set(['app.name', 'lang.en', 'lang.zh-CN', 'jobs.noNextFire']);
    const untranslated = Object.keys(en).filter((k) => !same.has(k) && zhCN[k as keyof typeof en] === en[k as keyof typeof en]);
    expect(untranslated).toEqual([]);
  });

  it('fills placeholders', () => {
    expect(translate('en', 'jobs.selected', { count: 3 })).toBe('3 selected');
    expect(translate('zh-CN', 'jobs.selected', { count: 3 })).toBe('已选 3 个');
    expect(translate('en', 'login.rateLimited')).toBe('Too many attempts. Try again in {seconds} s.');
  });

  it('picks the saved language, else the browser languages', () => {
    expect(localeFromLanguages(['zh-TW', 'en'])).toBe('zh-CN');
    expect(localeFromLanguages(['de', 'en-GB'])).toBe('en');
    expect(localeFromLanguages(['fr'])).toBe('en');
    expect(initialLocale({ getItem: () => 'en' }, ['zh-CN'])).toBe('en');
    expect(initialLocale({ getItem: () => 'klingon' }, ['zh-CN'])).toBe('zh-CN');
    expect(initialLocale({ getItem: () => { throw new Error('denied'); } }, ['zh'])).toBe('zh-CN');
    expect(initialLocale(undefined, [])).toBe('en');
  });
});
