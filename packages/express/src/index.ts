// @infergate/express: see README.md. Public exports are listed here explicitly.
export {};
