import type { Reservation } from '../budget-ledger.js';
import type { CostTracker } from '../cost-tracker.js';

/**
 * Settles or releases a reservation for an integration (`withCost`, `costInterceptor`). The call
 * already has its answer, so a ledger failure must not become the call's error: it is emitted as
 * 'ledger-error' instead. The one place both integrations handle it.
 */
export async function finishReservation(
  tracker: CostTracker,
  reservation: Reservation,
  operation: 'settle' | 'release',
  work: () => Promise<unknown>,
): Promise<void> {
  try {
    await work();
  } catch (error) {
    tracker.emit('ledger-error', { operation, reservationId: reservation.id, error });
  }
}
