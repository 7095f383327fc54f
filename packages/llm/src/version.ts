/** This package's version (the tracer's instrumentation version). */
export const VERSION = '0.1.0';
