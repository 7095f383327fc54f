// The demo's tenants: three traffic shapes sharing one Triton model and the chat router.

export interface TenantSpec {
  name: string;
  /** One word for tables. */
  pattern: 'steady' | 'bursty' | 'flood';
  description: string;
  /** Triton calls per second at time t (seconds) for open-loop tenants. */
  rate?: (t: number) => number;
  /** Closed-loop tenants: this many callers, each sending its next call when the last one ends. */
  concurrency?: number;
  /** Rows per Triton call. */
  rows: number;
  /** Most Triton calls in flight; an open-loop call beyond it is shed (counted, not sent). */
  maxInFlight: number;
  /** Chat calls per second. */
  chatPerS: number;
  /** Chart colour. */
  color: string;
}

export const TENANTS: readonly TenantSpec[] = [
  {
    name: 'acme',
    pattern: 'steady',
    description: '250 calls/s × 1 row, steady; 3 chats/s',
    rate: () => 250,
    rows: 1,
    maxInFlight: 128,
    chatPerS: 3,
    color: '#2b6cb0',
  },
  {
    name: 'globex',
    pattern: 'bursty',
    description: '500 calls/s × 2 rows, 1 s on / 1 s off; 2 chats/s',
    rate: (t) => (Math.floor(t) % 2 === 0 ? 500 : 0),
    rows: 2,
    maxInFlight: 128,
    chatPerS: 2,
    color: '#2f855a',
  },
  {
    name: 'initech',
    pattern: 'flood',
    description: 'a flood: 384 callers back to back × 1 row; 5 chats/s',
    concurrency: 384,
    rows: 1,
    maxInFlight: 384,
    chatPerS: 5,
    color: '#c05621',
  },
];
