/**
 * The job-editor feature's messages, in both languages (merged into the catalogue by i18n/en.ts and
 * i18n/zh-CN.ts). Keys start with `jobEditor.`; zh-CN must have exactly the keys of en.
 */
const en = {
} as const;

export const jobEditorMessages = {
  en,
  'zh-CN': {
  } satisfies Record<keyof typeof en, string>,
};
