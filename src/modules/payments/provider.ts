/**
 * Port to a payment provider, and the sandbox provider used by default. A real
 * provider (card acquirer, PromptPay aggregator) implements the same three calls
 * and reports settlements and failures back through `PaymentService.settle/fail`.
 */
export interface PaymentProvider {
  readonly name: string;
  /** Registers a checkout; returns the provider's reference for it. */
  createCheckout(p: { paymentId: string; amountMinor: number; currency: string; description: string }): Promise<{ ref: string }>;
  /** Cancels a checkout that was not paid. */
  void(ref: string): Promise<void>;
  /** Returns money of a settled checkout. */
  refund(ref: string, amountMinor: number): Promise<void>;
}

/** Takes every call and moves no money: payments settle or fail only through the sandbox routes or the page's Pay button. */
export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox';

  async createCheckout(p: { paymentId: string }): Promise<{ ref: string }> {
    return { ref: `sbx_${p.paymentId}` };
  }

  async void(): Promise<void> {}

  async refund(): Promise<void> {}
}
