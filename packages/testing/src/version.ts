/** The package version; the test server reports it as its version unless told otherwise. */
export const VERSION = '0.1.0';
