/**
 * Polls `check` until it neither throws nor returns `false`, or fails after `timeoutMs`
 * with the last error. The polite way to wait on state that has no event: never a bare sleep.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 25, message } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false) return value;
      lastError = new Error('the check returned false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      const error = new Error(`${message ?? 'condition'} not met within ${timeoutMs} ms: ${reason}`);
      (error as Error & { cause?: unknown }).cause = lastError;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
