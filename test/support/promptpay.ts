/**
 * A realistic PromptPay (Thai QR, EMVCo merchant-presented) payload, built the
 * way a provider's answer carries it: tag-length-value fields ending in a
 * CRC-16/CCITT-FALSE checksum; and a helper that makes a seeded payment look
 * like a real provider's (provider, provider_display) straight in the database.
 */
import type { TestService } from './test-service.js';
import type { CheckoutDisplay } from '../../src/modules/payments/provider.js';

const tlv = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;

function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'ascii')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** A dynamic PromptPay bill-payment QR for `amount` baht (e.g. "250.00"). */
export function promptpayPayload(amount: string, reference = 'PI3QWERTY0123456789'): string {
  const billPayment = tlv('00', 'A000000677010112') + tlv('01', '010753600031508') + tlv('02', reference) + tlv('03', 'KS0001');
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('30', billPayment) +
    tlv('53', '764') +
    tlv('54', amount) +
    tlv('58', 'TH') +
    tlv('59', 'KS WORKSPACE CO LTD') +
    tlv('60', 'BANGKOK') +
    '6304';
  return body + crc16(body);
}

/** Makes a seeded (sandbox) payment look opened with a real provider. */
export async function asProviderPayment(
  svc: TestService,
  paymentId: string,
  display: CheckoutDisplay,
  provider: 'stripe' | 'opn' = 'stripe',
): Promise<void> {
  await svc.services.storage.db
    .updateTable('payments')
    .set({ provider, provider_ref: `pi_test_${paymentId.slice(-12)}`, provider_display: JSON.stringify(display) })
    .where('id', '=', paymentId)
    .execute();
}
