/**
 * Runs an async task one pass at a time. A `trigger()` while a pass runs asks for exactly one more
 * pass after it (however many triggers arrive), so work driven by watch events is never done
 * concurrently and never misses the last event. The task handles its own errors.
 */
export interface SerialTask {
  /** Starts a pass now, or one more after the current one. */
  trigger(): void;
  /** Resolves once no pass is running (now, or when the current passes end). */
  settled(): Promise<void>;
}

/** `shouldContinue` is asked before each extra pass (e.g. "not closed", "still leader"). */
export function createSerialTask(pass: () => Promise<void>, shouldContinue: () => boolean = () => true): SerialTask {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    trigger() {
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          await pass();
        } while (again && shouldContinue());
      })().finally(() => {
        running = undefined;
      });
    },
    async settled() {
      while (running) await running;
    },
  };
}
