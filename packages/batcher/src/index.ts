// @infergate/batcher: see README.md. Public exports are listed here explicitly.
export {};
