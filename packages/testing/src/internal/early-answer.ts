// An answer known before its execution ends (decision 0023). A model whose outputs follow from its
// inputs alone (`simulated_gpu`) computes them when the execution starts, as a GPU would during its
// execution; when the transport can hold a built answer, the pipeline builds and encodes it while the
// execution runs and the transport writes it the moment the execution ends. Nothing leaves before
// that moment, and a call cancelled meanwhile sends only what a cancelled call sends.

/**
 * The key under which a pipeline whose transport holds answers offers its hook on the execution's
 * context (a registered symbol, so that a benchmark's wrapper of a model can pass it on).
 */
export const ANSWER_EARLY: unique symbol = Symbol.for('infergate.testing.answerEarly') as never;

/** The hook: `until` settles when the execution ends (rejects if it never ran, e.g. cancelled while queued). */
export type AnswerEarly = (until: Promise<void>) => void;

/** What a unary call's context carries for this: set by the transport, then by the pipeline. */
export interface EarlyAnswerContext {
  /** The transport can hold a built answer until its execution ends. */
  earlyAnswers?: boolean;
  /** Set by the pipeline when the answer it returned must wait: the execution's end. */
  answerAfter?: Promise<void> | undefined;
}

/**
 * For a model's `execute`: hands `until` (its execution's end) to the pipeline if the call's
 * transport can hold the answer, so the model may return its outputs before `until` settles. Returns
 * false (the model must wait for `until` itself) otherwise.
 */
export function answerAfter(context: object, until: Promise<void>): boolean {
  const hook = (context as { [ANSWER_EARLY]?: AnswerEarly })[ANSWER_EARLY];
  if (typeof hook !== 'function') return false;
  hook(until);
  return true;
}
