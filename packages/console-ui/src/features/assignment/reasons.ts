/**
 * Why an item has no executor, in the user's language: the allocator's unassigned reasons (core's
 * UNASSIGNED_REASONS) and the preview's own (`item-removed`, `job-disabled`). A reason the UI does
 * not know yet is shown as the server wrote it.
 */
import type { MessageKey } from '../../i18n';

const REASONS = {
  'no-eligible-executor': 'assignment.reason.no-eligible-executor',
  'no-preferred-executor-online': 'assignment.reason.no-preferred-executor-online',
  'no-executor-has-handler': 'assignment.reason.no-executor-has-handler',
  'all-drained': 'assignment.reason.all-drained',
  'item-removed': 'assignment.reason.item-removed',
  'job-disabled': 'assignment.reason.job-disabled',
} as const satisfies Record<string, MessageKey>;

/** The message of `reason` (pure given `t`). */
export function reasonLabel(t: (key: MessageKey) => string, reason: string): string {
  return reason in REASONS ? t(REASONS[reason as keyof typeof REASONS]) : reason;
}
