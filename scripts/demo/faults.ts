// Runs the environment's fault steps at their fraction of the run and records each as an event.
import type { FaultStep } from './environment.js';
import type { DemoEvent, Recorder } from './metrics.js';

export interface FaultSchedule {
  /** Waits for the steps already started, and runs recoveries not yet due (every fault is undone). */
  finish(): Promise<void>;
}

export function scheduleFaults(
  steps: readonly FaultStep[],
  durationS: number,
  recorder: Recorder,
  onEvent: (event: DemoEvent) => void,
): FaultSchedule {
  const running: Promise<void>[] = [];
  const pending = new Set(steps);
  const fire = (step: FaultStep) => {
    if (!pending.delete(step)) return;
    onEvent(recorder.event(step.kind, step.text, step.window));
    running.push(
      Promise.resolve()
        .then(() => step.run())
        .catch((error: unknown) => {
          onEvent(recorder.event('info', `fault step failed: ${String(error)}`));
        }),
    );
  };
  const timers = steps.map((step) => setTimeout(() => fire(step), step.at * durationS * 1000));
  return {
    async finish() {
      for (const timer of timers) clearTimeout(timer);
      for (const step of [...pending]) if (step.kind === 'recover') fire(step);
      await Promise.all(running);
    },
  };
}
