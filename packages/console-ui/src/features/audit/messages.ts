/**
 * The audit feature's messages, in both languages (merged into the catalogue by i18n/en.ts and
 * i18n/zh-CN.ts). Keys start with `audit.`; zh-CN must have exactly the keys of en.
 */
const en = {
} as const;

export const auditMessages = {
  en,
  'zh-CN': {
  } satisfies Record<keyof typeof en, string>,
};
