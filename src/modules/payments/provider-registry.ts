/**
 * Which provider takes a project's money: the account its site document set
 * (Stripe or Opn, its secrets opened here and nowhere else), else the sandbox in
 * development and uat, else none (production without an account: the page says
 * online payment is not available). Adapters are built once per account version.
 */
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Db } from '../../platform/db/db.js';
import { SandboxProvider, type PaymentMethod, type PaymentProvider, type ProviderDeps, type ProviderFactory } from './provider.js';
import type { ProviderAccountRow, ProviderRecordsRepository } from './provider-records-repository.js';

/** The provider a payment is opened with, and the account it belongs to (null for the sandbox). */
export interface ResolvedProvider {
  accountId: string | null;
  provider: PaymentProvider;
  methods: PaymentMethod[];
}

export interface ProviderRegistryDeps {
  records: ProviderRecordsRepository;
  secretBox: SecretBox;
  /** Adapter factories by provider name (stripe, opn). */
  factories: Partial<Record<'stripe' | 'opn', ProviderFactory>>;
  providerDeps: ProviderDeps;
  /** A provider that takes every call and moves no money (the sandbox), or a replacement in tests. */
  sandbox?: PaymentProvider;
}

export class ProviderRegistry {
  private readonly built = new Map<string, { version: number; provider: PaymentProvider }>();
  readonly sandbox: PaymentProvider;

  constructor(private readonly deps: ProviderRegistryDeps) {
    this.sandbox = deps.sandbox ?? new SandboxProvider();
  }

  /** The provider a new payment of the project is opened with (read in the caller's transaction). */
  async forProject(projectId: string, db?: Db): Promise<ResolvedProvider> {
    const row = await this.deps.records.accountOfProject(projectId, db);
    if (!row) return { accountId: null, provider: this.sandbox, methods: ['promptpay'] };
    return { accountId: row.id, provider: this.adapter(row), methods: methodsOf(row) };
  }

  /** The adapter of an account by its id (a payment's `provider_id`, a webhook's `providerId`); undefined when unknown. */
  async byAccountId(accountId: string | null): Promise<PaymentProvider | undefined> {
    if (accountId === null) return this.sandbox;
    const row = await this.deps.records.accountById(accountId);
    return row && this.adapter(row);
  }

  private adapter(row: ProviderAccountRow): PaymentProvider {
    const cached = this.built.get(row.id);
    if (cached && cached.version === Number(row.updated_at)) return cached.provider;
    const name = row.provider === 'opn' ? 'opn' : 'stripe';
    const factory = this.deps.factories[name];
    if (!factory) throw new Error(`No adapter for payment provider ${row.provider}`);
    const provider = factory(
      {
        id: row.id,
        provider: name,
        secretKey: this.deps.secretBox.open(row.secret_key_enc),
        webhookSecret: this.deps.secretBox.open(row.webhook_secret_enc),
        methods: methodsOf(row),
        apiBaseUrl: row.api_base_url,
      },
      this.deps.providerDeps,
    );
    this.built.set(row.id, { version: Number(row.updated_at), provider });
    return provider;
  }
}

function methodsOf(row: ProviderAccountRow): PaymentMethod[] {
  const parsed = JSON.parse(row.methods) as unknown;
  return Array.isArray(parsed) && parsed.length ? (parsed as PaymentMethod[]) : ['promptpay'];
}
